//! Idempotent creates. A create may carry a key (`order_id`, `reference_id`) unique per tenant:
//! the same request again answers with the resource the first one made (a safe retry), and a
//! different request reusing the key is refused with `409`. Requests are compared by their
//! canonical JSON. The store's unique index, not a read before the write, is what makes two
//! concurrent requests with one key create one resource: the loser reads the winner's.

use payments_store::Keyed;

use super::error::{Error, Result};

/// What an earlier request with this key means for `request`: `Some(original)` to answer with,
/// `None` when the key is new, `409` when a different request used it.
pub fn replay<T>(field: &str, key: &str, earlier: Option<Keyed<T>>, request: &str) -> Result<Option<T>> {
    match earlier {
        Some(earlier) if earlier.request == request => Ok(Some(earlier.resource)),
        Some(_) => Err(Error::conflict(format!("{field} {key:?} was already used by a different request"))),
        None => Ok(None),
    }
}

/// The answer to a create that carries `key`, given what making it gave: when it was refused (or
/// found its key taken), an earlier request with the key decides — its resource for a retry,
/// `409` for a different request — whatever changed since the first time. Looking the key up
/// only then saves a read on every first attempt; the unique index, not this look-up, is what
/// keeps the key unique.
pub async fn or_replay<'k, T, R>(made: Result<T>, key: Option<&'k str>, earlier: impl FnOnce(&'k str) -> R) -> Result<T>
where
    R: Future<Output = Result<Option<T>>>,
{
    let (Err(_), Some(key)) = (&made, key) else { return made };
    Ok(match earlier(key).await? {
        Some(original) => original,
        None => return made,
    })
}

/// The canonical JSON of a create request: what a retry must repeat exactly.
pub fn canonical<T: serde::Serialize>(request: &T) -> Result<String> {
    super::json(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn earlier(request: &str) -> Option<Keyed<&'static str>> {
        Some(Keyed { resource: "the original", request: request.to_owned() })
    }

    #[test]
    fn a_new_key_creates() {
        assert_eq!(replay::<&str>("order_id", "o-1", None, r#"{"amount":1}"#), Ok(None));
    }

    #[test]
    fn the_same_request_again_gets_the_original() {
        assert_eq!(replay("order_id", "o-1", earlier(r#"{"amount":1}"#), r#"{"amount":1}"#), Ok(Some("the original")));
    }

    #[test]
    fn a_different_request_with_the_key_is_a_conflict() {
        assert_eq!(
            replay("reference_id", "inv-9", earlier(r#"{"amount":1}"#), r#"{"amount":2}"#),
            Err(Error::conflict(r#"reference_id "inv-9" was already used by a different request"#))
        );
    }

    #[tokio::test]
    async fn a_refused_create_with_a_used_key_answers_as_the_first_request_did() {
        let refused = || Err::<&str, _>(Error::invalid("insufficient funds"));
        let original = |_: &str| async { Ok(Some("the original")) };
        let unused = |_: &str| async { Ok(None) };
        assert_eq!(or_replay(refused(), Some("o-1"), original).await, Ok("the original"));
        assert_eq!(or_replay(refused(), Some("o-1"), unused).await, refused(), "a new key: the refusal stands");
        assert_eq!(or_replay(refused(), None, original).await, refused(), "no key: nothing to replay");
        let conflict = |_: &str| async { Err(Error::conflict("used by a different request")) };
        assert_eq!(
            or_replay(refused(), Some("o-1"), conflict).await,
            Err(Error::conflict("used by a different request"))
        );
        assert_eq!(or_replay(Ok("made"), Some("o-1"), conflict).await, Ok("made"), "made: the key was free");
    }

    #[test]
    fn canonical_json_is_stable() {
        #[derive(serde::Serialize)]
        struct Create {
            amount: u64,
            reference: Option<&'static str>,
        }
        let one = canonical(&Create { amount: 5, reference: None }).unwrap();
        assert_eq!(one, canonical(&Create { amount: 5, reference: None }).unwrap());
        assert_ne!(one, canonical(&Create { amount: 5, reference: Some("x") }).unwrap());
    }
}
