//! What several of the suite's tests share: bank details, a recipient made through the client,
//! and the ids a list answers.

use std::collections::BTreeSet;

use payments_client::{Client, types};
use payments_tests::sandbox::*;
use uuid::Uuid;

pub(crate) fn bank(currency: &str) -> types::builder::BankAccount {
    types::BankAccount::builder().currency(code::<types::CurrencyCode>(currency))
}

pub(crate) async fn create_recipient(
    client: &Client,
    country: &str,
    account: types::builder::BankAccount,
) -> Result<types::Recipient, (u16, String)> {
    client
        .create_recipient()
        .body(
            types::RecipientCreate::builder()
                .type_(types::RecipientType::Business)
                .country(code::<types::CountryCode>(country))
                .bank_account(account),
        )
        .send()
        .await
        .map(|r| r.into_inner())
        .map_err(|e| client_error::<()>(Err(e)))
}

/// A Nigerian account at bank 058 in the name the bank holds for it (the sandbox derives it
/// from the account number: `POST /recipients/validate` tells).
pub(crate) fn ng_account(account_number: &str, holder: &str) -> types::builder::BankAccount {
    bank("NGN").account_name(Some(code(holder))).bank_code(Some(code("058"))).account_number(Some(code(account_number)))
}

pub(crate) async fn pr_ids(builder: payments_client::builder::ListPaymentRequests<'_>) -> Vec<Uuid> {
    builder.send().await.unwrap().into_inner().into_iter().map(|r| r.id).collect()
}

pub(crate) async fn tx_ids(builder: payments_client::builder::ListTransactions<'_>) -> BTreeSet<Uuid> {
    builder.limit(limit(100)).send().await.unwrap().into_inner().into_iter().map(|t| t.id).collect()
}

pub(crate) async fn va_ids(builder: payments_client::builder::ListVirtualAccounts<'_>) -> Vec<Uuid> {
    builder.send().await.unwrap().into_inner().into_iter().map(|a| a.id).collect()
}

pub(crate) fn payment_to(balance: Uuid, recipient: Uuid) -> types::builder::TransactionCreate {
    payment(balance, recipient, 1)
}
