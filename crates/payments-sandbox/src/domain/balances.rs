//! Balances: opening and naming them, and what the API shows of one — its amount, its worth in
//! the tenant's default currency, and (GBP) the UK account that money can be sent to.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use payments_store::{BalanceFilter, BalanceRecord, Change, Page, TenantId};
use payments_types as types;
use uuid::Uuid;

use super::error::{Error, Result, listing};
use super::{Now, Sandbox, Tenant, changeset, money, reference};

impl Sandbox {
    pub async fn list_balances(
        &self,
        tenant: Tenant,
        filter: BalanceFilter,
        page: Page,
    ) -> Result<Vec<types::Balance>> {
        let records = self.store.balances(tenant.id, &filter, page).await.map_err(listing("balance"))?;
        records.into_iter().map(|record| shown(record, &tenant)).collect()
    }

    pub async fn create_balance(&self, tenant: Tenant, body: types::BalanceCreate) -> Result<types::Balance> {
        let currency = reference::supported_currency("currency", &body.currency)?;
        let name = body.name.map_or_else(|| format!("{} balance", currency.code), |n| n.to_string());
        let now = Now::new();
        let id = Uuid::new_v4();
        let open = Change::OpenBalance { id, currency: currency.code.to_owned(), name: name.clone() };
        self.apply(changeset(tenant.id, now).with(open)).await?;
        shown(BalanceRecord { id, name, currency: currency.code.to_owned(), amount: 0, created: now.0 }, &tenant)
    }

    pub async fn get_balance(&self, tenant: Tenant, id: Uuid) -> Result<types::Balance> {
        shown(self.balance_record(tenant, id, "").await?, &tenant)
    }

    pub async fn update_balance(&self, tenant: Tenant, id: Uuid, body: types::BalanceUpdate) -> Result<types::Balance> {
        self.balance_record(tenant, id, "").await?;
        let rename = Change::RenameBalance { id, name: body.name.to_string() };
        self.apply(changeset(tenant.id, Now::new()).with(rename)).await?;
        self.get_balance(tenant, id).await
    }

    /// The tenant's balance `id`, or `404` naming it (after `field`, when the id came in one).
    pub(super) async fn balance_record(&self, tenant: Tenant, id: Uuid, field: &str) -> Result<BalanceRecord> {
        self.store.balance(tenant.id, id).await?.ok_or_else(|| Error::not_found(format!("{field}balance {id}")))
    }

    /// The currency of the tenant's balance `id`, or `404` as [`Sandbox::balance_record`]: from
    /// memory once the balance has been read (see [`BalanceCurrencies`]).
    pub(super) async fn balance_currency(
        &self,
        tenant: Tenant,
        id: Uuid,
        field: &str,
    ) -> Result<&'static reference::CurrencyInfo> {
        if let Some(currency) = self.balance_currencies.get(tenant, id) {
            return Ok(currency);
        }
        let record = self.balance_record(tenant, id, field).await?;
        let currency = reference::supported_currency("balance", &record.currency)?;
        self.balance_currencies.keep(tenant, id, currency);
        Ok(currency)
    }

    /// The settlement balance of a payment request or virtual account: the one given, or the
    /// oldest in `currency`; when both are given they must agree.
    pub(super) async fn settlement_balance(
        &self,
        tenant: Tenant,
        currency: Option<&types::CurrencyCode>,
        balance_id: Option<Uuid>,
    ) -> Result<BalanceRecord> {
        match (currency, balance_id) {
            (None, None) => Err(Error::invalid("give currency, settlement_balance_id, or both")),
            (currency, Some(id)) => {
                let balance = self.balance_record(tenant, id, "settlement_balance_id: ").await?;
                if let Some(currency) = currency.filter(|c| c.as_str() != balance.currency) {
                    return Err(Error::invalid(format!(
                        "currency {} does not match settlement balance {id}, which holds {}",
                        currency.as_str(),
                        balance.currency
                    )));
                }
                Ok(balance)
            }
            (Some(currency), None) => {
                reference::supported_currency("currency", currency)?;
                self.store.oldest_balance(tenant.id, currency).await?.ok_or_else(|| {
                    Error::invalid(format!("you have no {} balance: open one with POST /balances", currency.as_str()))
                })
            }
        }
    }
}

/// A balance as the API shows it to `tenant`; its name moves into it rather than being copied.
fn shown(record: BalanceRecord, tenant: &Tenant) -> Result<types::Balance> {
    let currency = reference::currency(&record.currency)
        .ok_or_else(|| Error::internal(format!("balance {} holds {:?}", record.id, record.currency)))?;
    let held = u128::try_from(record.amount).map_err(Error::internal)?;
    let addresses = if currency.code == "GBP" { vec![local_address(record.id, &record.name)] } else { vec![] };
    Ok(types::Balance {
        id: record.id,
        name: types::BalanceName::try_from(record.name)
            .map_err(|e| Error::internal(format!("balance {}'s name: {e}", record.id)))?,
        currency: currency.typed_code(),
        balance: record.amount,
        default_currency: tenant.default_currency.typed_code(),
        default_currency_balance: i64::try_from(money::value_in(held, currency, tenant.default_currency))
            .map_err(Error::internal)?,
        addresses,
        created: record.created,
    })
}

/// A GBP balance's own UK account, derived from its id so it never changes.
fn local_address(id: Uuid, name: &str) -> types::BalanceAddress {
    let number = reference::fnv1a(id.as_bytes()) % 100_000_000;
    // Eight digits, zeros first; by itoa rather than `format!`, on every balance read.
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(number);
    let mut account_number = String::with_capacity(8);
    account_number.extend(std::iter::repeat_n('0', 8 - digits.len()));
    account_number.push_str(digits);
    types::BalanceAddress {
        active: true,
        details: types::AddressDetails { account_name: name.into(), account_number, sort_code: "040004".into() },
        supported_channels: vec!["FP".into(), "BACS".into(), "CHAPS".into()],
        type_: types::AddressType::Local,
    }
}

/// The currency of each balance read so far, by tenant and id. A payment needs only that of the
/// balance it is paid from, and reading the balance each time found none of its pages cached:
/// every commit empties a read connection's page cache (BENCHMARKS.md, *Why, measured: A
/// payment's JSON and pages*). What is kept is never stale, on any instance: a balance's
/// currency never changes, and no balance is removed. Only balances found in the store are
/// kept, and at most [`BalanceCurrencies::KEPT`]: when full, the map starts again empty.
#[derive(Clone, Default)]
pub(super) struct BalanceCurrencies(Arc<RwLock<HashMap<(TenantId, Uuid), &'static reference::CurrencyInfo>>>);

impl BalanceCurrencies {
    const KEPT: usize = 1 << 16;

    fn get(&self, tenant: Tenant, id: Uuid) -> Option<&'static reference::CurrencyInfo> {
        self.0.read().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&(tenant.id, id)).copied()
    }

    fn keep(&self, tenant: Tenant, id: Uuid, currency: &'static reference::CurrencyInfo) {
        let mut kept = self.0.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        if kept.len() >= Self::KEPT {
            kept.clear();
        }
        kept.insert((tenant.id, id), currency);
    }
}
