//! Payment requests: asking a payer for money through a pay link (and its QR code). A request
//! is `initiated` until the payer pays (`processed`, and the money is collected into the
//! settlement balance at once), fails to pay (`failed`), or the tenant cancels it.

use payments_store::{Change, Idempotency, Page, PaymentRequestFilter, StoreError, TenantId, UniqueKey};
use payments_types as types;
use types::PaymentRequestStatus as Status;
use types::WebhookEvent as Event;
use uuid::Uuid;

use super::error::{Error, Result, listing};
use super::idempotency::{canonical, or_replay, replay};
use super::transactions::{Incoming, IncomingKind, receive};
use super::{Now, Sandbox, Tenant, changeset, json, ok, reference, typed};

impl Sandbox {
    pub async fn list_payment_requests(
        &self,
        tenant: Tenant,
        filter: PaymentRequestFilter,
        page: Page,
    ) -> Result<Vec<types::PaymentRequest>> {
        self.store.payment_requests(tenant.id, &filter, page).await.map_err(listing("payment request"))
    }

    pub async fn get_payment_request(&self, tenant: Tenant, id: Uuid) -> Result<types::PaymentRequest> {
        self.payment_request(tenant.id, id).await
    }

    async fn payment_request(&self, tenant: TenantId, id: Uuid) -> Result<types::PaymentRequest> {
        self.store.payment_request(tenant, id).await?.ok_or_else(|| Error::not_found(format!("payment request {id}")))
    }

    pub async fn create_payment_request(
        &self,
        tenant: Tenant,
        body: types::PaymentRequestCreate,
    ) -> Result<types::PaymentRequest> {
        let request = canonical(&body)?;
        let key = body.reference_id.as_ref().map(|r| r.to_string());
        let made = self.request_payment(tenant, &body, key.as_deref(), &request).await;
        or_replay(made, key.as_deref(), |key| self.replay_payment_request(tenant, key, &request)).await
    }

    /// The payment request itself, for [`Sandbox::create_payment_request`].
    async fn request_payment(
        &self,
        tenant: Tenant,
        body: &types::PaymentRequestCreate,
        key: Option<&str>,
        request_json: &str,
    ) -> Result<types::PaymentRequest> {
        let balance = self.settlement_balance(tenant, body.currency.as_ref(), body.settlement_balance_id).await?;
        let currency = reference::supported_currency("currency", &balance.currency)?;
        let market = currency.payment_request_market.ok_or_else(|| {
            Error::invalid(format!(
                "currency {} does not support payment requests (see GET /currencies)",
                currency.code
            ))
        })?;
        if let Some(url) = &body.return_url
            && !(url.starts_with("https://") || url.starts_with("http://"))
        {
            return Err(Error::invalid("return_url must be an http or https URL"));
        }
        let now = Now::new();
        let id = Uuid::new_v4();
        let payment_url = self.payment_url(id);
        let request = types::PaymentRequest {
            id,
            market: typed(market)?,
            currency: typed(&balance.currency)?,
            amount: body.amount.clone(),
            settlement_balance_id: balance.id,
            reference_id: key.map(typed).transpose()?,
            reference: body.reference.as_ref().map(|r| typed(r)).transpose()?,
            status: Status::Initiated,
            qr_code_url: format!("{payment_url}/qr.svg"),
            payment_url,
            return_url: body.return_url.as_ref().map(|u| u.to_string()),
            created: now.0,
        };
        let changes = changeset(tenant.id, now)
            .with(Change::InsertPaymentRequest {
                request: Box::new(request.clone()),
                idempotency: key.map(|key| Idempotency { key: key.to_owned(), request: request_json.to_owned() }),
            })
            .with(Change::Event { event: Event::PaymentrequestInitiated, data: json(&request)? });
        match self.apply(changes).await {
            Ok(()) => Ok(request),
            // Taken by an earlier request: the caller answers from it.
            Err(StoreError::Duplicate(UniqueKey::PaymentRequestReferenceId)) => {
                Err(Error::internal("reference_id is taken"))
            }
            Err(other) => Err(other.into()),
        }
    }

    async fn replay_payment_request(
        &self,
        tenant: Tenant,
        key: &str,
        request: &str,
    ) -> Result<Option<types::PaymentRequest>> {
        replay("reference_id", key, self.store.payment_request_by_reference_id(tenant.id, key).await?, request)
    }

    pub async fn cancel_payment_request(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk> {
        self.decide_and_apply(|| async {
            let mut request = self.payment_request(tenant.id, id).await?;
            if request.status != Status::Initiated {
                return Err(Error::conflict(format!(
                    "payment request {id} is {}; only an initiated request can be cancelled",
                    request.status
                )));
            }
            request.status = Status::Cancelled;
            let changes = changeset(tenant.id, Now::new())
                .with(Change::SetPaymentRequestStatus {
                    id,
                    from: Status::Initiated,
                    to: Status::Cancelled,
                    paid: None,
                })
                .with(Change::Event { event: Event::PaymentrequestCancelled, data: json(&request)? });
            Ok((changes, ok()))
        })
        .await
    }

    /// `POST /sandbox/paymentrequests/{id}/pay`: the payer pays, or fails to.
    pub async fn simulate_payment(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: Option<types::SimulatePayment>,
    ) -> Result<types::PaymentRequest> {
        let body = body.unwrap_or_default();
        let succeeded = body.outcome == types::SimulatePaymentOutcome::Processed;
        self.pay(tenant.id, id, succeeded, body.payer_name.map(|n| n.to_string()), body.amount).await
    }

    /// The payment request behind a pay link, whoever owns it: the unguessable id in the link is
    /// the payer's credential.
    pub async fn payment_request_for_payer(&self, id: Uuid) -> Result<Option<types::PaymentRequest>> {
        Ok(self.store.payment_request_for_payer(id).await?.map(|(_, request)| request))
    }

    /// The payer pays on the hosted page (`amount`: what they typed, for an open request).
    pub async fn pay_as_payer(
        &self,
        id: Uuid,
        payer_name: Option<String>,
        amount: Option<types::Amount>,
    ) -> Result<types::PaymentRequest> {
        let (tenant, _) = self
            .store
            .payment_request_for_payer(id)
            .await?
            .ok_or_else(|| Error::not_found(format!("payment request {id}")))?;
        self.pay(tenant, id, true, payer_name, amount).await
    }

    /// An `initiated` request paid (`processed`, its amount collected into the settlement
    /// balance, then `settled`) or failed.
    async fn pay(
        &self,
        tenant: TenantId,
        id: Uuid,
        succeeded: bool,
        payer_name: Option<String>,
        offered: Option<types::Amount>,
    ) -> Result<types::PaymentRequest> {
        self.decide_and_apply(|| async {
            let mut request = self.payment_request(tenant, id).await?;
            if request.status != Status::Initiated {
                return Err(Error::conflict(format!(
                    "payment request {id} is {}; only an initiated request can be paid",
                    request.status
                )));
            }
            let now = Now::new();
            let mut changes = changeset(tenant, now);
            if !succeeded {
                request.status = Status::Failed;
                changes.push(Change::SetPaymentRequestStatus {
                    id,
                    from: Status::Initiated,
                    to: Status::Failed,
                    paid: None,
                });
                changes.push(Change::Event { event: Event::PaymentrequestFailed, data: json(&request)? });
                return Ok((changes, request));
            }
            let paid = amount_paid(request.amount.as_ref(), offered.clone())?;
            let open = request.amount.is_none();
            request.amount = Some(paid.clone());
            request.status = Status::Processed;
            changes.push(Change::SetPaymentRequestStatus {
                id,
                from: Status::Initiated,
                to: Status::Processed,
                paid: open.then(|| paid.clone()),
            });
            changes.push(Change::Event { event: Event::PaymentrequestProcessed, data: json(&request)? });
            let collection = Incoming {
                kind: IncomingKind::Collection,
                amount: paid,
                currency: request.currency.clone(),
                balance_id: request.settlement_balance_id,
                payer_name: payer_name.clone(),
                reference: request.reference.as_ref().map(|r| r.to_string()),
            };
            receive(&mut changes, now, collection)?;
            changes.push(Change::Event { event: Event::PaymentrequestSettled, data: json(&request)? });
            Ok((changes, request))
        })
        .await
    }
}

/// What the payer pays: the request's amount, or for an open request (no amount) the amount the
/// payer chose. An amount offered for a request with one must be that amount.
pub(super) fn amount_paid(asked: Option<&types::Amount>, offered: Option<types::Amount>) -> Result<types::Amount> {
    match (asked, offered) {
        (Some(asked), None) => Ok(asked.clone()),
        (Some(asked), Some(offered)) if &offered == asked => Ok(offered),
        (Some(asked), Some(offered)) => Err(Error::invalid(format!(
            "this payment request asks for exactly {}; the amount {} differs",
            asked.get(),
            offered.get()
        ))),
        (None, Some(offered)) => Ok(offered),
        (None, None) => Err(Error::invalid("this payment request has no amount: give the amount the payer pays")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn amount(value: u64) -> types::Amount {
        types::Amount::new(value).unwrap()
    }

    #[test]
    fn a_request_with_an_amount_is_paid_exactly_that() {
        assert_eq!(amount_paid(Some(&amount(2_500)), None), Ok(amount(2_500)));
        assert_eq!(amount_paid(Some(&amount(2_500)), Some(amount(2_500))), Ok(amount(2_500)));
        let differs = amount_paid(Some(&amount(2_500)), Some(amount(2_499))).unwrap_err();
        assert!(matches!(differs, Error::Invalid(m) if m.contains("exactly 2500")));
    }

    #[test]
    fn an_open_request_is_paid_what_the_payer_chooses_and_needs_an_amount() {
        assert_eq!(amount_paid(None, Some(amount(1))), Ok(amount(1)));
        let missing = amount_paid(None, None).unwrap_err();
        assert!(matches!(missing, Error::Invalid(m) if m.contains("has no amount")));
    }
}
