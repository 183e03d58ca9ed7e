//! How a changeset is written, whatever the backend: which postings move a balance, what each
//! balance moves by in all, and which row a refused change was about.

use uuid::Uuid;

use crate::Change;

/// For each change, what its balance moves by when the change is the first of consecutive
/// postings to one balance (a payment and its fee): one `UPDATE` for the run, checked against
/// the funds once for the whole, then a ledger row for each posting. `None` for the others.
pub(crate) fn balance_moves(changes: &[Change]) -> Vec<Option<i64>> {
    let mut moves = vec![None; changes.len()];
    let mut run: Option<(usize, Uuid)> = None;
    for (index, change) in changes.iter().enumerate() {
        run = match (change, run) {
            (Change::Post { balance, delta, .. }, Some((start, of))) if *balance == of => {
                moves[start] = moves[start].map(|total: i64| total.saturating_add(*delta));
                Some((start, of))
            }
            (Change::Post { balance, delta, .. }, _) => {
                moves[index] = Some(*delta);
                Some((index, *balance))
            }
            _ => None,
        };
    }
    moves
}

/// The row a guarded change expects, for [`StoreError::Stale`].
pub(crate) fn guarded(change: &Change) -> (&'static str, Uuid) {
    match change {
        Change::RenameBalance { id, .. } => ("balance", *id),
        Change::Post { balance, .. } => ("balance", *balance),
        Change::SetRecipientAlias { id, .. } | Change::DeleteRecipient { id } => ("recipient", *id),
        Change::SetPaymentRequestStatus { id, .. } => ("payment request", *id),
        Change::SetTransactionStatus { id, .. } => ("transaction", *id),
        Change::SetVirtualAccountStatus { id, .. }
        | Change::RenameVirtualAccount { id, .. }
        | Change::ExpectVirtualAccountStatus { id, .. } => ("virtual account", *id),
        Change::DeleteWebhookEndpoint { id } | Change::SetWebhookSecret { id, .. } => ("webhook endpoint", *id),
        Change::OpenBalance { id, .. } => ("balance", *id),
        Change::InsertRecipient(recipient) => ("recipient", recipient.id),
        Change::InsertPaymentRequest { request, .. } => ("payment request", request.id),
        Change::InsertTransaction { transaction, .. } => ("transaction", transaction.id),
        Change::InsertVirtualAccount { account, .. } => ("virtual account", account.id),
        Change::InsertWebhookEndpoint { endpoint, .. } => ("webhook endpoint", endpoint.id),
        Change::Ping { endpoint, .. } => ("webhook endpoint", *endpoint),
        Change::Event { .. } => ("event", Uuid::nil()),
    }
}

/// What the changeset's postings move each balance by in all, balances in order of appearance.
pub(crate) fn posting_totals(changes: &[Change]) -> Vec<(Uuid, i64)> {
    let mut totals: Vec<(Uuid, i64)> = Vec::new();
    for change in changes {
        if let Change::Post { balance, delta, .. } = change {
            match totals.iter_mut().find(|(b, _)| b == balance) {
                Some((_, total)) => *total += delta,
                None => totals.push((*balance, *delta)),
            }
        }
    }
    totals
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LedgerEntryKind;
    use payments_types as types;

    fn post(balance: Uuid, kind: LedgerEntryKind, delta: i64) -> Change {
        Change::Post { balance, transaction: Uuid::nil(), kind, delta }
    }

    #[test]
    fn consecutive_postings_to_one_balance_move_it_once() {
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let event = Change::Event { event: types::WebhookEvent::TransactionInitiated, data: "{}".into() };
        let changes = [
            post(a, LedgerEntryKind::Payment, -1_000),
            post(a, LedgerEntryKind::Fee, -20),
            post(b, LedgerEntryKind::Collection, 500),
            event,
            post(a, LedgerEntryKind::Refund, 1_000),
        ];
        assert_eq!(balance_moves(&changes), [Some(-1_020), None, Some(500), None, Some(1_000)]);
    }
}
