//! Every page of a list, and every item across its pages, as streams: what a generated client's
//! `{operation}_pages` and `{operation}_stream` return. Each page is the operation's own call
//! (its retries, credentials and hooks); the client says how the next page is asked for (a value
//! of its paging parameter, read from the page just answered) and where a page's items are.

use std::future::Future;
use std::str::FromStr;

use futures::{Stream, StreamExt};
use progenitor_client::{Error, ResponseValue};

/// Every page, the first asked for with `first` (`None`: the parameter left as the request has
/// it), each next one with what `next` reads from the page before it (and the value that page was
/// asked with). The stream ends after a page `next` finds no next value in, after a next value
/// that repeats the one just sent (a server that answers its last page again), and after an error.
pub fn pages<C, T, E, Fut>(
    first: Option<C>,
    send: impl Fn(Option<C>) -> Fut,
    next: impl Fn(&ResponseValue<T>, Option<&C>) -> Option<C>,
) -> impl Stream<Item = Result<ResponseValue<T>, Error<E>>>
where
    C: PartialEq + Clone,
    Fut: Future<Output = Result<ResponseValue<T>, Error<E>>>,
{
    enum State<C> {
        Ask(Option<C>),
        Done,
    }
    futures::stream::unfold((State::Ask(first), send, next), |(state, send, next)| async move {
        let State::Ask(cursor) = state else { return None };
        match send(cursor.clone()).await {
            Ok(page) => {
                let state = match next(&page, cursor.as_ref()) {
                    Some(value) if Some(&value) != cursor.as_ref() => State::Ask(Some(value)),
                    _ => State::Done,
                };
                Some((Ok(page), (state, send, next)))
            }
            Err(error) => Some((Err(error), (State::Done, send, next))),
        }
    })
}

/// Every item of every page of `pages`, in order; `items` takes a page's out of its body.
pub fn items<T, I, E>(
    pages: impl Stream<Item = Result<ResponseValue<T>, Error<E>>>,
    items: impl Fn(T) -> Vec<I>,
) -> impl Stream<Item = Result<I, Error<E>>> {
    pages
        .map(move |page| {
            let items: Vec<Result<I, Error<E>>> = match page {
                Ok(page) => items(page.into_inner()).into_iter().map(Ok).collect(),
                Err(error) => vec![Err(error)],
            };
            futures::stream::iter(items)
        })
        .flatten()
}

/// `value` as the parameter's type `C` (through JSON, so an item's `id` of one type can be sent
/// as a parameter of another); `None` when it is null or empty text, which asks for nothing.
pub fn value<V: serde::Serialize, C: serde::de::DeserializeOwned>(value: &V) -> Option<C> {
    let json = serde_json::to_value(value).ok()?;
    match &json {
        serde_json::Value::Null => None,
        serde_json::Value::String(text) if text.is_empty() => None,
        _ => serde_json::from_value(json).ok(),
    }
}

/// The value of the query parameter `name` in the `Link` header's `rel="next"` URL (RFC 8288), as
/// the parameter's type.
pub fn link_next<C: FromStr>(headers: &reqwest::header::HeaderMap, name: &str) -> Option<C> {
    let next = headers.get_all(reqwest::header::LINK).iter().filter_map(|v| v.to_str().ok()).find_map(|value| {
        value.split(',').find_map(|link| {
            let (target, params) = link.trim().split_once(';')?;
            let next = params.split(';').any(|p| {
                let p = p.trim();
                p.strip_prefix("rel=").is_some_and(|rel| rel.trim_matches('"').split(' ').any(|r| r == "next"))
            });
            next.then(|| target.trim().trim_start_matches('<').trim_end_matches('>').to_owned())
        })
    })?;
    let url = reqwest::Url::parse(&next).ok()?;
    let (_, found) = url.query_pairs().find(|(key, _)| key == name)?;
    found.parse().ok()
}

/// A count (`start` when nothing was sent yet) advanced by `by`, as the parameter's type.
pub fn advanced<C: FromStr + ToString>(current: Option<&C>, start: i64, by: usize) -> Option<C> {
    let now = match current {
        Some(value) => value.to_string().parse::<i64>().ok()?,
        None => start,
    };
    now.checked_add(i64::try_from(by).ok()?)?.to_string().parse().ok()
}

/// The first value of a count, as the parameter's type.
pub fn start<C: FromStr>(start: i64) -> Option<C> {
    start.to_string().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_link_is_found_among_others_and_its_parameter_read() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::LINK,
            r#"<https://api.example.com/items?page=1&per_page=2>; rel="prev", <https://api.example.com/items?per_page=2&page=3>; rel="next""#
                .parse()
                .unwrap(),
        );
        assert_eq!(link_next::<i64>(&headers, "page"), Some(3));
        assert_eq!(link_next::<i64>(&headers, "cursor"), None);
        assert_eq!(link_next::<i64>(&reqwest::header::HeaderMap::new(), "page"), None);
    }

    #[test]
    fn values_convert_through_json_and_blank_ones_ask_for_nothing() {
        assert_eq!(value::<_, String>(&Some("abc")), Some("abc".to_owned()));
        assert_eq!(value::<_, String>(&""), None);
        assert_eq!(value::<Option<String>, String>(&None), None);
        assert_eq!(advanced::<u32>(Some(&40), 0, 20), Some(60));
        assert_eq!(advanced::<u32>(None, 1, 1), Some(2));
    }
}
