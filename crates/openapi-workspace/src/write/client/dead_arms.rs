//! progenitor writes a `default` response as the error arm `_ => Err(Error::ErrorResponse(..))`,
//! then adds its own catch-all `_ => Err(Error::UnexpectedResponse(..))` after it whenever the
//! operation lists other responses too (it looks for the default at the end of its list of
//! responses, where it put it first). No status reaches the second arm, and an unreachable
//! pattern is refused where the crate is built with `-D warnings`: every arm after a `_` with no
//! guard is dropped, which changes nothing the client does. Likewise a status after a range that
//! holds it: progenitor orders a range by its first status (`5XX` as 500, before TomTom's `596`).

use syn::visit_mut::VisitMut;

pub(super) fn unreachable_arms(item: &mut syn::Item) {
    struct Arms;
    impl VisitMut for Arms {
        fn visit_expr_match_mut(&mut self, expr: &mut syn::ExprMatch) {
            syn::visit_mut::visit_expr_match_mut(self, expr);
            // A guarded `_ if …` is another kind of pattern than a bare `_`.
            let catch_all = expr.arms.iter().position(|arm| matches!(arm.pat, syn::Pat::Wild(_)));
            if let Some(place) = catch_all {
                expr.arms.truncate(place + 1);
            }
            let mut covered: Vec<(u64, u64)> = Vec::new();
            expr.arms.retain(|arm| match statuses(&arm.pat) {
                Some((low, high)) if covered.iter().any(|(l, h)| *l <= low && high <= *h) => false,
                Some(span) => {
                    covered.push(span);
                    true
                }
                None => true,
            });
        }
    }
    Arms.visit_item_mut(item);
}

/// The statuses an arm's pattern matches, when it is an integer (`404u16`) or a range of them
/// (`500u16..=599u16`).
pub(super) fn statuses(pattern: &syn::Pat) -> Option<(u64, u64)> {
    let number = |expr: &syn::Expr| match expr {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(int), .. }) => int.base10_parse::<u64>().ok(),
        _ => None,
    };
    match pattern {
        syn::Pat::Lit(literal) => number(&syn::Expr::Lit(literal.clone())).map(|n| (n, n)),
        syn::Pat::Range(range) if matches!(range.limits, syn::RangeLimits::Closed(_)) => {
            Some((number(range.start.as_deref()?)?, number(range.end.as_deref()?)?))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn arms_after_a_catch_all_are_dropped_and_no_other() {
        let mut file: syn::File = syn::parse_quote! {
            fn f(status: u16) -> u8 {
                match status {
                    200u16 => 0,
                    500u16..=599u16 => 4,
                    596u16 => 5,
                    _ if status > 500 => 1,
                    _ => 2,
                    _ => 3,
                }
            }
        };
        file.items.iter_mut().for_each(super::unreachable_arms);
        let text = prettyplease::unparse(&file);
        assert!(text.contains("_ if status > 500 => 1") && text.contains("_ => 2"), "{text}");
        assert!(!text.contains("_ => 3"), "{text}");
        assert!(text.contains("500u16..=599u16 => 4") && !text.contains("596u16"), "{text}");
    }
}
