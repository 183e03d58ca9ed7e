//! Tenants: who a bearer token belongs to. Tokens are stored only as their SHA-256; the
//! directory keeps the tenants seen so far in memory, so authenticating a known token reads
//! nothing and never waits for a write. An unknown hash is looked up in the store (read side)
//! each time: a tenant made by another process (`create-tenant`) is found at once.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use payments_store::{Store, StoreError, TenantId, TenantRecord, TokenHash, Unreconciled};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::error::{Error, Result};
use super::reference::{self, CurrencyInfo};
use super::{Now, Sandbox};

/// The caller, as its bearer token identifies it.
#[derive(Debug, Clone, Copy)]
pub struct Tenant {
    pub id: TenantId,
    pub default_currency: &'static CurrencyInfo,
}

/// The SHA-256 of a token: tokens are stored only as this.
pub fn token_hash(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

/// A new random token, `sk_sandbox_` and 32 hex characters.
pub fn new_token() -> String {
    format!("sk_sandbox_{}", hex::encode(rand::random::<[u8; 16]>()))
}

fn tenant(record: &TenantRecord) -> Result<Tenant> {
    Ok(Tenant {
        id: record.id,
        default_currency: reference::currency(&record.default_currency).ok_or_else(|| {
            Error::internal(format!("tenant {} has currency {:?}", record.id, record.default_currency))
        })?,
    })
}

#[derive(Clone)]
pub(super) struct Directory {
    store: Arc<dyn Store>,
    known: Arc<RwLock<HashMap<TokenHash, Tenant, Prehashed>>>,
}

/// The map's hash of a token's SHA-256: its first eight bytes, which are as evenly spread as
/// SipHash's of all of it, at a fraction of the cost, paid by every request (instructions per
/// request, BENCHMARKS.md). Only tokens found in the store are kept, so no caller can fill the
/// map with keys chosen to collide.
#[derive(Clone, Copy, Default)]
struct Prehashed;

impl std::hash::BuildHasher for Prehashed {
    type Hasher = FirstBytes;

    fn build_hasher(&self) -> FirstBytes {
        FirstBytes(0)
    }
}

struct FirstBytes(u64);

impl std::hash::Hasher for FirstBytes {
    fn finish(&self) -> u64 {
        self.0
    }

    /// Called with the array's length, then with its bytes.
    fn write(&mut self, bytes: &[u8]) {
        let mut first = [0; 8];
        let n = bytes.len().min(8);
        first[..n].copy_from_slice(&bytes[..n]);
        self.0 ^= u64::from_le_bytes(first);
    }
}

impl Directory {
    pub(super) fn new(store: Arc<dyn Store>) -> Self {
        Self { store, known: Arc::default() }
    }

    /// The tenant of `hash` among those seen so far: memory only.
    fn cached(&self, hash: &TokenHash) -> Option<Tenant> {
        let known = self.known.read().unwrap_or_else(|p| p.into_inner());
        // The map found it by hash already; the comparison is constant-time all the same.
        known.get_key_value(hash).and_then(|(stored, tenant)| bool::from(stored.ct_eq(hash)).then_some(*tenant))
    }

    async fn find(&self, hash: &TokenHash) -> Result<Option<Tenant>> {
        if let Some(tenant) = self.cached(hash) {
            return Ok(Some(tenant));
        }
        let Some(record) = self.store.tenant_by_token(hash).await? else { return Ok(None) };
        let found = tenant(&record)?;
        self.known.write().unwrap_or_else(|p| p.into_inner()).insert(*hash, found);
        Ok(Some(found))
    }
}

impl Sandbox {
    /// The tenant holding `token`, or `None`.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Tenant>> {
        self.tenants.find(&token_hash(token)).await
    }

    /// Whether `token` is the token of a tenant this process has already seen. Reads nothing:
    /// for deciding, cheaply, whether a caller is known before anything is looked up.
    pub fn knows_token(&self, token: &str) -> bool {
        self.tenants.cached(&token_hash(token)).is_some()
    }

    /// Makes sure `token` has a tenant (named `name` when it is made now); `true` when made now.
    /// A token that has one already is only read, so a sandbox starting on a full disk (or a
    /// read-only one) with the tokens it had starts.
    pub async fn ensure_tenant(&self, token: &str, name: &str) -> Result<bool> {
        let hash = token_hash(token);
        if self.store.tenant_by_token(&hash).await?.is_some() {
            return Ok(false);
        }
        Ok(self.store.ensure_tenant(&hash, name, Now::new().0).await?.created)
    }

    /// `Ok` when the database can be read and written now (see `Store::ready`) and no write has
    /// failed for an outage in the last 30 seconds (the longest `Retry-After` of one): the probe
    /// is one small write, and on a disk with little room left it may pass where payments fail.
    /// Only payments' own commits end an outage, so an instance a balancer stopped sending
    /// writes to is ready again 30 seconds after its last failure if the probe passes.
    pub async fn ready(&self) -> Result<()> {
        self.store.ready().await?;
        match super::outages::recent(std::time::Duration::from_secs(30)) {
            Some(outage) => {
                let source = StoreError::unavailable(outage, "writes failed for it in the last 30 seconds");
                Err(Error::Unavailable { outage, source })
            }
            None => Ok(()),
        }
    }

    /// A new tenant named `name` and its token (shown once: only its hash is kept).
    pub async fn create_tenant(&self, name: &str) -> Result<String> {
        let token = new_token();
        self.store.create_tenant(&token_hash(&token), name, Now::new().0).await?;
        Ok(token)
    }

    pub async fn tenant_count(&self) -> Result<u64> {
        Ok(self.store.tenant_count().await?)
    }

    /// Balances whose amount differs from their ledger (there must be none).
    pub async fn unreconciled_balances(&self) -> Result<Vec<Unreconciled>> {
        Ok(self.store.unreconciled_balances().await?)
    }
}
