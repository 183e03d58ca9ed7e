//! Recipients: bank accounts checked against the country's rules before they are saved.

use payments_store::{Change, Page};
use payments_types as types;
use types::NameCheck;
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
        let mut checked = reference::check_bank_account(&body.country, &body.bank_account, true)?;
        if let (Some(held), Some(given)) = (&checked.resolved_name, &body.bank_account.account_name) {
            match name_check(given, held) {
                NameCheck::Match | NameCheck::NotChecked => {}
                // Saved as the bank knows it.
                NameCheck::CloseMatch => checked.bank_account.account_name = Some(typed(held)?),
                NameCheck::NoMatch => {
                    return Err(Error::invalid(format!(
                        "bank_account.account_name {:?} does not match the name the bank holds for this account \
                         (no_match; POST /recipients/validate shows the bank's name)",
                        given.trim()
                    )));
                }
                NameCheck::Unknown => unreachable!("name_check answers only the checks it knows"),
            }
        }
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
        self.apply(changes).await?;
        Ok(recipient)
    }

    /// Checks bank details without saving them, and says what the bank knows of them.
    pub fn validate_recipient(&self, body: types::RecipientValidate) -> Result<types::RecipientValidation> {
        let checked = reference::check_bank_account(&body.country, &body.bank_account, false)?;
        let given = body.bank_account.account_name.as_ref().map(|n| n.trim().to_owned());
        let name_check = match (&checked.resolved_name, &given) {
            (Some(held), Some(given)) => name_check(given, held),
            _ => NameCheck::NotChecked,
        };
        Ok(types::RecipientValidation {
            name_check,
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

/// The name given for an account against the name its bank holds (see `NameCheck` in the
/// document): compared as lower-case words of letters and digits.
pub(super) fn name_check(given: &str, held: &str) -> NameCheck {
    let words = |name: &str| -> Vec<String> {
        name.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
    };
    let (given, held) = (words(given), words(held));
    if given.is_empty() {
        return NameCheck::NotChecked;
    }
    if given == held {
        return NameCheck::Match;
    }
    let sorted = |words: &[String]| {
        let mut words = words.to_vec();
        words.sort();
        words
    };
    let reordered = sorted(&given) == sorted(&held);
    let word_by_word = given.len() == held.len()
        && given.iter().zip(&held).filter(|(g, h)| g != h).count() == 1
        && given.iter().zip(&held).all(|(g, h)| g == h || initial_of(g, h) || one_letter_off(g, h));
    if reordered || word_by_word { NameCheck::CloseMatch } else { NameCheck::NoMatch }
}

/// `initial` is the first letter of `word` (`a` for `adaeze`).
fn initial_of(initial: &str, word: &str) -> bool {
    initial.chars().count() == 1 && word.chars().count() > 1 && word.starts_with(initial)
}

/// One letter added, dropped or changed (Levenshtein distance 1).
fn one_letter_off(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() { (&a, &b) } else { (&b, &a) };
    match long.len() - short.len() {
        0 => a.iter().zip(&b).filter(|(x, y)| x != y).count() == 1,
        1 => {
            let split = short.iter().zip(long.iter()).take_while(|(x, y)| x == y).count();
            short[split..] == long[split + 1..]
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_words_match_whatever_the_case_punctuation_and_spacing() {
        assert_eq!(name_check("Adaeze Okafor", "ADAEZE OKAFOR"), NameCheck::Match);
        assert_eq!(name_check("  adaeze   okafor. ", "ADAEZE OKAFOR"), NameCheck::Match);
        assert_eq!(name_check("O'Brien-Smith Ltd", "o brien smith ltd"), NameCheck::Match);
    }

    #[test]
    fn reordered_words_an_initial_or_one_letter_off_is_a_close_match() {
        assert_eq!(name_check("Okafor Adaeze", "ADAEZE OKAFOR"), NameCheck::CloseMatch);
        assert_eq!(name_check("A Okafor", "Adaeze Okafor"), NameCheck::CloseMatch);
        assert_eq!(name_check("A. Okafor", "Adaeze Okafor"), NameCheck::CloseMatch);
        assert_eq!(name_check("Adaeze Okafr", "Adaeze Okafor"), NameCheck::CloseMatch, "a letter dropped");
        assert_eq!(name_check("Adaeze Okaffor", "Adaeze Okafor"), NameCheck::CloseMatch, "a letter added");
        assert_eq!(name_check("Adaeze Okafer", "Adaeze Okafor"), NameCheck::CloseMatch, "a letter changed");
    }

    #[test]
    fn anything_else_is_no_match_and_no_name_is_not_checked() {
        assert_eq!(name_check("Harry Jones", "Adaeze Okafor"), NameCheck::NoMatch);
        assert_eq!(name_check("Adaeze", "Adaeze Okafor"), NameCheck::NoMatch, "a word missing");
        assert_eq!(name_check("A Okfr", "Adaeze Okafor"), NameCheck::NoMatch, "two words off");
        assert_eq!(name_check("Adaeze Okafor Ltd", "Adaeze Okafor"), NameCheck::NoMatch);
        assert_eq!(name_check("B Okafor", "Adaeze Okafor"), NameCheck::NoMatch, "another initial");
        assert_eq!(name_check("Adaeze Okfr", "Adaeze Okafor"), NameCheck::NoMatch, "two letters off");
        assert_eq!(name_check(" -- ", "Adaeze Okafor"), NameCheck::NotChecked);
    }
}
