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

/// The canonical JSON of a create request: what a retry must repeat exactly.
pub fn canonical<T: serde::Serialize>(request: &T) -> Result<String> {
    serde_json::to_string(request).map_err(Error::internal)
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
