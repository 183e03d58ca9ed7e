//! The simulated payment rails: what banks would do with time, done at once. `initiated`
//! virtual accounts become `active`; `processing` payments become `processed` and `initiated`
//! ones `processing` — one step each per advance. Each move is its own write, guarded by the
//! status it was decided on, so an item moved meanwhile (by a caller, or by another instance's
//! rail) is left alone and never moved twice.

use futures::StreamExt;
use payments_store::{Changeset, StoreError, TenantId};
use payments_types as types;
use types::TransactionStatus as TxStatus;

use super::error::Result;
use super::transactions::move_payment;
use super::virtual_accounts::move_account;
use super::{Now, Sandbox, Tenant, changeset};

/// Moves written at once at most.
const RAIL_WRITES: usize = 64;

impl Sandbox {
    /// `POST /sandbox/advance`: the caller's accounts and payments, one step.
    pub async fn advance_sandbox(&self, tenant: Tenant) -> Result<types::SandboxAdvance> {
        self.advance(Some(tenant.id)).await
    }

    /// One step of the rails for one tenant, or (`None`) for everyone: the background rail.
    /// The moves are written side by side (they concern different items), so many share a
    /// commit.
    pub async fn advance(&self, tenant: Option<TenantId>) -> Result<types::SandboxAdvance> {
        let due = self.store.on_rails(tenant).await?;
        let mut moves: Vec<(bool, Changeset)> = Vec::new();
        for (owner, account) in due.initiated_accounts {
            let mut changes = changeset(owner, Now::new());
            move_account(&mut changes, account, types::VirtualAccountStatus::Active)?;
            moves.push((true, changes));
        }
        let steps = due
            .processing_payments
            .into_iter()
            .map(|p| (p, TxStatus::Processed))
            .chain(due.initiated_payments.into_iter().map(|p| (p, TxStatus::Processing)));
        for ((owner, payment), to) in steps.filter(|((_, p), _)| p.transaction_type == types::TransactionType::Payment)
        {
            let mut changes = changeset(owner, Now::new());
            move_payment(&mut changes, payment, to, None)?;
            moves.push((false, changes));
        }
        let mut written = futures::stream::iter(moves)
            .map(|(account, changes)| async move { (account, self.apply(changes).await) })
            .buffer_unordered(RAIL_WRITES);
        let mut advance = types::SandboxAdvance { virtual_accounts_activated: 0, transactions_advanced: 0 };
        while let Some((account, applied)) = written.next().await {
            let moved = i32::from(self.moved(applied)?);
            if account {
                advance.virtual_accounts_activated += moved;
            } else {
                advance.transactions_advanced += moved;
            }
        }
        Ok(advance)
    }

    /// Whether a move was written: one that found its item moved already is skipped.
    fn moved(&self, applied: Result<(), StoreError>) -> Result<bool> {
        match applied {
            Ok(()) => Ok(true),
            Err(StoreError::Stale { .. }) => Ok(false),
            Err(other) => Err(other.into()),
        }
    }
}
