//! Recipients: bank accounts checked against the country's rules before they are saved.

use payments_store::{Change, Page};
use payments_types as types;
use types::WebhookEvent as Event;
use uuid::Uuid;

use super::error::{Error, Result, listing};
use super::{Now, Sandbox, Tenant, changeset, json, ok, reference, typed};

impl Sandbox {
    pub async fn list_recipients(&self, tenant: Tenant, page: Page) -> Result<Vec<types::Recipient>> {
        self.store.recipients(tenant.id, page).await.map_err(listing("recipient"))
    }

    pub async fn get_recipient(&self, tenant: Tenant, id: Uuid) -> Result<types::Recipient> {
        self.store.recipient(tenant.id, id).await?.ok_or_else(|| Error::not_found(format!("recipient {id}")))
    }

    pub async fn create_recipient(&self, tenant: Tenant, body: types::RecipientCreate) -> Result<types::Recipient> {
        let checked = reference::check_bank_account(&body.country, &body.bank_account, true)?;
        let now = Now::new();
        let recipient = types::Recipient {
            id: Uuid::new_v4(),
            country: body.country,
            default_reference: body.default_reference.as_ref().map(|r| typed(r)).transpose()?,
            alias: body.alias.as_ref().map(|a| typed(a)).transpose()?,
            type_: body.type_,
            created: now.0,
            bank_account: checked.bank_account,
        };
        let changes = changeset(tenant.id, now)
            .with(Change::InsertRecipient(Box::new(recipient.clone())))
            .with(Change::Event { event: Event::RecipientCreated, data: json(&recipient)? });
        self.store.apply(changes).await?;
        Ok(recipient)
    }

    /// Checks bank details without saving them, and says what the bank knows of them.
    pub fn validate_recipient(&self, body: types::RecipientValidate) -> Result<types::RecipientValidation> {
        let checked = reference::check_bank_account(&body.country, &body.bank_account, false)?;
        let given = body.bank_account.account_name.as_ref().map(|n| n.trim().to_owned());
        Ok(types::RecipientValidation {
            bank_name: checked.bank_name,
            bank_id: checked.bank_id,
            account_name: checked.resolved_name.or(given),
            account_number: checked.account_number,
            currency: body.bank_account.currency,
        })
    }

    pub async fn delete_recipient(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk> {
        self.decide_and_apply(|| async {
            let recipient = self.get_recipient(tenant, id).await?;
            let changes = changeset(tenant.id, Now::new())
                .with(Change::DeleteRecipient { id })
                .with(Change::Event { event: Event::RecipientDeleted, data: json(&recipient)? });
            Ok((changes, ok()))
        })
        .await
    }

    pub async fn update_recipient(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::RecipientUpdate,
    ) -> Result<types::Recipient> {
        self.decide_and_apply(|| async {
            let mut recipient = self.get_recipient(tenant, id).await?;
            recipient.alias = body.alias.as_ref().map(|a| typed(a)).transpose()?;
            let alias = recipient.alias.as_ref().map(|a| a.to_string());
            let changes = changeset(tenant.id, Now::new()).with(Change::SetRecipientAlias { id, alias });
            Ok((changes, recipient))
        })
        .await
    }
}
