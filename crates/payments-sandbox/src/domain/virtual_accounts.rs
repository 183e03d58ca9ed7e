//! Virtual accounts: bank account numbers of the sandbox's banks that a tenant hands out, whose
//! incoming transfers are deposited into a settlement balance. They are `initiated` until the
//! rail activates them, and can then be blocked, reactivated and closed (the table below).

use payments_store::{Change, Idempotency, Page, StoreError, UniqueKey, VirtualAccountFilter};
use payments_types as types;
use types::VirtualAccountStatus as Status;
use types::WebhookEvent as Event;
use uuid::Uuid;

use super::error::{Error, Result, listing};
use super::idempotency::{canonical, or_replay, replay};
use super::{Now, Sandbox, Tenant, changeset, json, ok, reference, typed};

/// Whether an account may go from `from` to `to`.
pub(super) fn transition_allowed(from: Status, to: Status) -> bool {
    use Status::*;
    matches!((from, to), (Initiated, Active | Closed) | (Active, Blocked | Closed) | (Blocked, Active | Closed))
}

/// The event an account emits on reaching `status`.
pub(super) fn event_for(status: Status) -> Event {
    match status {
        Status::Initiated => Event::VirtualaccountInitiated,
        Status::Active => Event::VirtualaccountActive,
        Status::Blocked => Event::VirtualaccountBlocked,
        Status::Closed => Event::VirtualaccountClosed,
        // What a client reads from a newer server; the sandbox sets and stores only these.
        Status::Unknown => unreachable!("the sandbox moves accounts only to the statuses it knows"),
    }
}

/// The changes that move `account` to `to`, and the account as it then is; `409` when the
/// table forbids it.
pub(super) fn move_account(
    changes: &mut payments_store::Changeset,
    mut account: types::VirtualAccount,
    to: Status,
) -> Result<types::VirtualAccount> {
    if !transition_allowed(account.status, to) {
        return Err(Error::conflict(format!(
            "virtual account {} is {} and cannot become {to}",
            account.id, account.status
        )));
    }
    changes.push(Change::SetVirtualAccountStatus { id: account.id, from: account.status, to });
    account.status = to;
    changes.push(Change::Event { event: event_for(to), data: json(&account)? });
    Ok(account)
}

/// The bank, number prefix and length, and channels of a new account in `currency`.
fn issuing_bank(currency: &str) -> Option<(&'static str, &'static str, u32, &'static [&'static str])> {
    match currency {
        "NGN" => Some(("Sandbox Bank Nigeria", "99", 8, &["NIP"])),
        "INR" => Some(("Sandbox Bank India", "7700", 10, &["NEFT", "RTGS", "IMPS"])),
        _ => None,
    }
}

/// Tries at numbers before giving up: the odds of eight collisions in a row are nil unless the
/// number space is nearly full.
const NUMBER_ATTEMPTS: usize = 8;

impl Sandbox {
    pub async fn list_virtual_accounts(
        &self,
        tenant: Tenant,
        filter: VirtualAccountFilter,
        page: Page,
    ) -> Result<Vec<types::VirtualAccount>> {
        self.store.virtual_accounts(tenant.id, &filter, page).await.map_err(listing("virtual account"))
    }

    pub async fn get_virtual_account(&self, tenant: Tenant, id: Uuid) -> Result<types::VirtualAccount> {
        self.virtual_account(tenant, id).await
    }

    pub(super) async fn virtual_account(&self, tenant: Tenant, id: Uuid) -> Result<types::VirtualAccount> {
        self.store
            .virtual_account(tenant.id, id)
            .await?
            .ok_or_else(|| Error::not_found(format!("virtual account {id}")))
    }

    pub async fn create_virtual_account(
        &self,
        tenant: Tenant,
        body: types::VirtualAccountCreate,
    ) -> Result<types::VirtualAccount> {
        let request = canonical(&body)?;
        let key = body.reference_id.as_ref().map(|r| r.to_string());
        let made = self.issue_account(tenant, &body, key.as_deref(), &request).await;
        or_replay(made, key.as_deref(), |key| self.replay_virtual_account(tenant, key, &request)).await
    }

    /// The account itself, for [`Sandbox::create_virtual_account`].
    async fn issue_account(
        &self,
        tenant: Tenant,
        body: &types::VirtualAccountCreate,
        key: Option<&str>,
        request: &str,
    ) -> Result<types::VirtualAccount> {
        let balance = self.settlement_balance(tenant, body.currency.as_ref(), body.settlement_balance_id).await?;
        let currency = reference::supported_currency("currency", &balance.currency)?;
        let (bank, prefix, digits, channels) =
            issuing_bank(currency.code).filter(|_| currency.supports_virtual_account).ok_or_else(|| {
                Error::invalid(format!(
                    "currency {} does not support virtual accounts (see GET /currencies)",
                    currency.code
                ))
            })?;
        let name = body.account_name.as_ref().map_or_else(|| balance.name.clone(), |n| n.to_string());
        for _ in 0..NUMBER_ATTEMPTS {
            let number =
                format!("{prefix}{:0width$}", rand::random_range(0..10u64.pow(digits)), width = digits as usize);
            let now = Now::new();
            let account = types::VirtualAccount {
                id: Uuid::new_v4(),
                account_name: typed(&name)?,
                currency: typed(&balance.currency)?,
                settlement_balance_id: balance.id,
                reference_id: key.map(typed).transpose()?,
                details: types::AccountDetails {
                    bank_name: bank.into(),
                    account_name: name.clone(),
                    account_number: number,
                },
                type_: types::AddressType::Local,
                supported_channels: channels.iter().map(|c| (*c).to_owned()).collect(),
                status: Status::Initiated,
                created: now.0,
            };
            let changes = changeset(tenant.id, now)
                .with(Change::InsertVirtualAccount {
                    account: Box::new(account.clone()),
                    idempotency: key.map(|key| Idempotency { key: key.to_owned(), request: request.to_owned() }),
                })
                .with(Change::Event { event: Event::VirtualaccountInitiated, data: json(&account)? });
            match self.apply(changes).await {
                Ok(()) => return Ok(account),
                Err(StoreError::Duplicate(UniqueKey::AccountNumber)) => continue,
                // Taken by an earlier request: the caller answers from it.
                Err(StoreError::Duplicate(UniqueKey::VirtualAccountReferenceId)) => {
                    return Err(Error::internal("reference_id is taken"));
                }
                Err(other) => return Err(other.into()),
            }
        }
        Err(Error::internal(format!("no free {} account number after {NUMBER_ATTEMPTS} tries", currency.code)))
    }

    async fn replay_virtual_account(
        &self,
        tenant: Tenant,
        key: &str,
        request: &str,
    ) -> Result<Option<types::VirtualAccount>> {
        replay("reference_id", key, self.store.virtual_account_by_reference_id(tenant.id, key).await?, request)
    }

    pub async fn close_virtual_account(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk> {
        self.set_account_status(tenant, id, Status::Closed).await.map(|_| ok())
    }

    /// `POST /sandbox/virtualaccounts/{id}/status`.
    pub async fn simulate_virtual_account_status(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::SimulateVirtualAccountStatus,
    ) -> Result<types::VirtualAccount> {
        self.set_account_status(tenant, id, typed(&body.status.to_string())?).await
    }

    async fn set_account_status(&self, tenant: Tenant, id: Uuid, to: Status) -> Result<types::VirtualAccount> {
        self.decide_and_apply(|| async {
            let account = self.virtual_account(tenant, id).await?;
            let mut changes = changeset(tenant.id, Now::new());
            let moved = move_account(&mut changes, account, to)?;
            Ok((changes, moved))
        })
        .await
    }

    pub async fn update_virtual_account(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::VirtualAccountUpdate,
    ) -> Result<types::VirtualAccount> {
        self.decide_and_apply(|| async {
            let mut account = self.virtual_account(tenant, id).await?;
            if account.status == Status::Closed {
                return Err(Error::conflict(format!("virtual account {id} is closed")));
            }
            account.account_name = typed(&body.account_name)?;
            account.details.account_name = body.account_name.to_string();
            // Renamed only while still in the status it was decided on (not closed meanwhile).
            let changes = changeset(tenant.id, Now::new())
                .with(Change::ExpectVirtualAccountStatus { id, status: account.status })
                .with(Change::RenameVirtualAccount { id, name: body.account_name.to_string() });
            Ok((changes, account))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transition_table() {
        use Status::*;
        let all = [Initiated, Active, Blocked, Closed];
        let allowed: Vec<_> = all
            .iter()
            .flat_map(|&f| all.iter().map(move |&t| (f, t)))
            .filter(|&(f, t)| transition_allowed(f, t))
            .collect();
        assert_eq!(
            allowed,
            [
                (Initiated, Active),
                (Initiated, Closed),
                (Active, Blocked),
                (Active, Closed),
                (Blocked, Active),
                (Blocked, Closed)
            ]
        );
    }

    #[test]
    fn every_status_has_its_event() {
        assert_eq!(event_for(Status::Blocked).to_string(), "virtualaccount.blocked");
        assert_eq!(event_for(Status::Closed).to_string(), "virtualaccount.closed");
    }
}
