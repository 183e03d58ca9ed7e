//! progenitor writes a `default` response as the error arm `_ => Err(Error::ErrorResponse(..))`,
//! then adds its own catch-all `_ => Err(Error::UnexpectedResponse(..))` after it whenever the
//! operation lists other responses too (it looks for the default at the end of its list of
//! responses, where it put it first). No status reaches the second arm, and an unreachable
//! pattern is refused where the crate is built with `-D warnings`: every arm after a `_` with no
//! guard is dropped, which changes nothing the client does.

use syn::visit_mut::VisitMut;

pub(super) fn unreachable_arms(client: &mut syn::File) {
    struct Arms;
    impl VisitMut for Arms {
        fn visit_expr_match_mut(&mut self, expr: &mut syn::ExprMatch) {
            syn::visit_mut::visit_expr_match_mut(self, expr);
            // A guarded `_ if …` is another kind of pattern than a bare `_`.
            let catch_all = expr.arms.iter().position(|arm| matches!(arm.pat, syn::Pat::Wild(_)));
            if let Some(place) = catch_all {
                expr.arms.truncate(place + 1);
            }
        }
    }
    Arms.visit_file_mut(client);
}

#[cfg(test)]
mod tests {
    #[test]
    fn arms_after_a_catch_all_are_dropped_and_no_other() {
        let mut file: syn::File = syn::parse_quote! {
            fn f(status: u16) -> u8 {
                match status {
                    200u16 => 0,
                    _ if status > 500 => 1,
                    _ => 2,
                    _ => 3,
                }
            }
        };
        super::unreachable_arms(&mut file);
        let text = prettyplease::unparse(&file);
        assert!(text.contains("_ if status > 500 => 1") && text.contains("_ => 2"), "{text}");
        assert!(!text.contains("_ => 3"), "{text}");
    }
}
