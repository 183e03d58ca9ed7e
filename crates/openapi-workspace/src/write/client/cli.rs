//! progenitor's clap CLI for the client, less what progenitor declares and does not implement.

use proc_macro2::TokenStream;
use progenitor::Generator;
use syn::visit_mut::VisitMut;

use super::view::View;
use super::{progenitor, settings};
use crate::error::{Error, Result};
use crate::read::Spec;

/// progenitor's clap CLI for the client crate `client_crate`: a `Cli` that turns each operation
/// into a `clap::Command` and runs it, reporting through a `CliConfig` the binary implements.
pub(crate) fn cli(spec: &Spec, client_crate: &str) -> Result<TokenStream> {
    let view = View::of(spec)?;
    let mut generator = Generator::new(&settings(&view));
    let cli = progenitor("a CLI", || generator.cli(&view.openapi, client_crate))?;
    without_unimplemented_flags(cli)
}

/// progenitor 0.15 gives every operation with a body a `--json-body-template` flag whose help is
/// its placeholder `XXX` and which nothing reads: a flag that does nothing is worse than none, so
/// it is taken out (`--json-body` is how a whole body is given).
fn without_unimplemented_flags(cli: TokenStream) -> Result<TokenStream> {
    struct Unimplemented;
    impl VisitMut for Unimplemented {
        fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
            syn::visit_mut::visit_expr_mut(self, expr);
            if let syn::Expr::MethodCall(call) = expr
                && call.method == "arg"
                && call
                    .args
                    .first()
                    .is_some_and(|arg| quote::quote!(#arg).to_string().contains("\"json-body-template\""))
            {
                *expr = (*call.receiver).clone();
            }
        }
    }
    let mut file: syn::File = syn::parse2(cli).map_err(|e| Error::unparsable("progenitor's CLI", e))?;
    Unimplemented.visit_file_mut(&mut file);
    Ok(quote::quote!(#file))
}
