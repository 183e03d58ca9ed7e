//! The document's security schemes as the router checks them: where each credential is found
//! (the `Authorization` header for `http` bearer and basic, `oauth2` and `openIdConnect`; a
//! header, a query parameter or a cookie for `apiKey`), and what each operation asks for —
//! alternatives, each the schemes required together (`security: [{a: [], b: []}, {c: []}]`),
//! none for `security: []` or an alternative `{}`. `mutualTLS` is the transport's: the router
//! never sees the certificate, so it asks nothing for it.

use heck::ToUpperCamelCase;
use openapiv3::{APIKeyLocation, OpenAPI, Operation, ReferenceOr, SecurityScheme};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::error::{Result, bail};

/// Where an `apiKey` is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    Header(String),
    Query(String),
    Cookie(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `Authorization: Bearer <token>`: http bearer, oauth2, openIdConnect.
    Bearer,
    /// `Authorization: Basic <base64 of user:password>`.
    Basic,
    ApiKey(Place),
    /// A scheme the router cannot check, and why: refused when an operation asks for it.
    Unsupported(String),
}

/// A scheme the router checks.
#[derive(Debug, Clone)]
pub(crate) struct Scheme {
    /// Its name under `components/securitySchemes`.
    pub name: String,
    /// Its variant of the generated `Credential`.
    pub variant: Ident,
    pub kind: Kind,
}

impl Scheme {
    /// The credential's type in the `Credential<'a>` variant.
    pub(crate) fn variant_fields(&self) -> TokenStream {
        match &self.kind {
            Kind::Bearer | Kind::ApiKey(Place::Header(_) | Place::Cookie(_)) => quote!((&'a str)),
            Kind::ApiKey(Place::Query(_)) => quote!((::std::borrow::Cow<'a, str>)),
            Kind::Basic => quote!({
                /// The user name.
                username: ::std::borrow::Cow<'a, str>,
                /// The password.
                password: ::std::borrow::Cow<'a, str>,
            }),
            // Never asked for: `requirement` refuses it.
            Kind::Unsupported(_) => TokenStream::new(),
        }
    }

    /// Where the router finds it, and what it is, for the variant's documentation.
    pub(crate) fn describe(&self) -> String {
        match &self.kind {
            Kind::Bearer => format!(" `{}`: the token of `Authorization: Bearer <token>`.", self.name),
            Kind::Basic => format!(" `{}`: the user name and password of `Authorization: Basic`.", self.name),
            Kind::ApiKey(Place::Header(name)) => format!(" `{}`: the `{name}` header.", self.name),
            Kind::ApiKey(Place::Query(name)) => format!(" `{}`: the `{name}` query parameter.", self.name),
            Kind::ApiKey(Place::Cookie(name)) => format!(" `{}`: the `{name}` cookie.", self.name),
            Kind::Unsupported(why) => why.clone(),
        }
    }

    /// An expression of the request's credential for this scheme, an `Option`.
    pub(crate) fn extract(&self, rt: &syn::Path) -> TokenStream {
        match &self.kind {
            Kind::Bearer => quote!(#rt::bearer(&headers)),
            Kind::Basic => quote!(#rt::basic(&headers)),
            Kind::ApiKey(Place::Header(name)) => quote!(#rt::header_text(&headers, #name)),
            Kind::ApiKey(Place::Query(name)) => quote!(#rt::query_text(&uri, #name)),
            Kind::ApiKey(Place::Cookie(name)) => quote!(#rt::cookie(&headers, #name)),
            Kind::Unsupported(_) => quote!(None::<&str>),
        }
    }

    /// The `Credential` made of `found`, what [`Scheme::extract`] found.
    pub(crate) fn credential(&self, found: &Ident) -> TokenStream {
        let variant = &self.variant;
        match &self.kind {
            Kind::Basic => quote!(Credential::#variant { username: #found.0.into(), password: #found.1.into() }),
            _ => quote!(Credential::#variant(#found)),
        }
    }

    /// Whether finding it needs the request's URI.
    pub(crate) fn needs_uri(&self) -> bool {
        matches!(self.kind, Kind::ApiKey(Place::Query(_)))
    }

    /// What a client sends for it, for the `401`'s message.
    fn hint(&self) -> String {
        match &self.kind {
            Kind::Bearer => "Authorization: Bearer <token>".into(),
            Kind::Basic => "Authorization: Basic <base64 of user:password>".into(),
            Kind::ApiKey(Place::Header(name)) => format!("the {name} header"),
            Kind::ApiKey(Place::Query(name)) => format!("the {name} query parameter"),
            Kind::ApiKey(Place::Cookie(name)) => format!("the {name} cookie"),
            Kind::Unsupported(_) => String::new(),
        }
    }

    /// Its `WWW-Authenticate` challenge.
    fn challenge(&self, realm: &str) -> String {
        match &self.kind {
            Kind::Bearer => format!("Bearer realm=\"{realm}\""),
            Kind::Basic => format!("Basic realm=\"{realm}\", charset=\"UTF-8\""),
            Kind::ApiKey(Place::Header(name)) => format!("ApiKey realm=\"{realm}\", header=\"{name}\""),
            Kind::ApiKey(Place::Query(name)) => format!("ApiKey realm=\"{realm}\", query=\"{name}\""),
            Kind::ApiKey(Place::Cookie(name)) => format!("ApiKey realm=\"{realm}\", cookie=\"{name}\""),
            Kind::Unsupported(_) => String::new(),
        }
    }
}

/// What an operation asks for: alternatives of schemes required together (indexes into the
/// document's schemes), and the `WWW-Authenticate` that names them.
#[derive(Debug, Clone)]
pub(crate) struct Requirement {
    pub alternatives: Vec<Vec<usize>>,
    pub challenge: String,
    /// What to send, for the `401`'s message: `Authorization: Bearer <token>`, or `the x-api-key
    /// header and Authorization: Basic <…>`, alternatives joined by "or".
    pub hint: String,
}

/// Every scheme of `components/securitySchemes` the router checks, sorted by name; `mutualTLS`
/// is left out (the transport's). A scheme the router cannot check is refused with its pointer.
pub(crate) fn schemes(openapi: &OpenAPI) -> Result<Vec<Scheme>> {
    let mut found = Vec::new();
    let mut names: Vec<&String> =
        openapi.components.iter().flat_map(|components| components.security_schemes.keys()).collect();
    names.sort();
    for name in names {
        let pointer = format!("#/components/securitySchemes/{name}");
        let scheme = openapi.components.as_ref().and_then(|c| c.security_schemes.get(name));
        let kind = match scheme {
            Some(ReferenceOr::Item(SecurityScheme::HTTP { scheme, .. })) if scheme.eq_ignore_ascii_case("bearer") => {
                Kind::Bearer
            }
            Some(ReferenceOr::Item(SecurityScheme::HTTP { scheme, .. })) if scheme.eq_ignore_ascii_case("basic") => {
                Kind::Basic
            }
            Some(ReferenceOr::Item(SecurityScheme::HTTP { scheme, .. })) => Kind::Unsupported(format!(
                "{pointer}: the http scheme {scheme:?} is not supported: the router checks bearer and basic \
                 credentials, api keys, and oauth2 and openIdConnect bearer tokens"
            )),
            Some(ReferenceOr::Item(SecurityScheme::OAuth2 { .. } | SecurityScheme::OpenIDConnect { .. })) => {
                Kind::Bearer
            }
            Some(ReferenceOr::Item(SecurityScheme::APIKey { location, name: key, .. })) => {
                Kind::ApiKey(match location {
                    APIKeyLocation::Header => Place::Header(key.to_ascii_lowercase()),
                    APIKeyLocation::Query => Place::Query(key.clone()),
                    APIKeyLocation::Cookie => Place::Cookie(key.clone()),
                })
            }
            Some(ReferenceOr::Reference { reference }) => Kind::Unsupported(format!(
                "{pointer}: a security scheme that is a reference ({reference}) is not supported"
            )),
            None => continue,
        };
        let mut variant = name.to_upper_camel_case().chars().filter(|c| c.is_alphanumeric()).collect::<String>();
        if variant.is_empty() || variant.starts_with(|c: char| c.is_ascii_digit()) {
            variant.insert_str(0, "Scheme");
        }
        while found.iter().any(|s: &Scheme| s.variant == variant) {
            variant.push('_');
        }
        found.push(Scheme { name: name.clone(), variant: format_ident!("{}", variant), kind });
    }
    Ok(found)
}

/// The schemes `mutualTLS` names, which the router leaves to the transport.
fn mutual_tls(openapi: &OpenAPI, name: &str) -> bool {
    // openapiv3 (a 3.0 model) has no mutualTLS: a 3.1 document's is read as this extension's.
    openapi
        .components
        .as_ref()
        .and_then(|c| c.extensions.get("x-mutual-tls-schemes"))
        .and_then(|names| names.as_array())
        .is_some_and(|names| names.iter().any(|n| n == name))
}

/// The `WWW-Authenticate` of a `401` the router did not write itself (an implementation's own,
/// from outside its authentication): the challenges of every scheme the document defines,
/// realm its title; empty when it defines none, as it then names no way to authenticate.
pub(crate) fn document_challenge(openapi: &OpenAPI, schemes: &[Scheme]) -> String {
    challenge_of(openapi, schemes)
}

/// The `WWW-Authenticate` naming `schemes`: each one's challenge once, realm the document's
/// title; the schemes the router cannot check name none.
fn challenge_of<'a>(openapi: &OpenAPI, schemes: impl IntoIterator<Item = &'a Scheme>) -> String {
    let realm = openapi.info.title.replace(['"', '\\'], "");
    let mut challenges: Vec<String> = Vec::new();
    for challenge in schemes.into_iter().map(|scheme| scheme.challenge(&realm)).filter(|c| !c.is_empty()) {
        if !challenges.contains(&challenge) {
            challenges.push(challenge);
        }
    }
    challenges.join(", ")
}

/// What `operation` asks for (its own `security`, or the document's), `None` when it may be
/// called without a credential; a scheme it names that the document does not define is refused
/// with the operation's pointer (`context`).
pub(crate) fn requirement(
    openapi: &OpenAPI,
    operation: Option<&Operation>,
    schemes: &[Scheme],
    context: &str,
) -> Result<Option<Requirement>> {
    let requirements = operation.and_then(|o| o.security.as_ref()).or(openapi.security.as_ref());
    let Some(requirements) = requirements else { return Ok(None) };
    let mut alternatives = Vec::new();
    for requirement in requirements {
        let mut together = Vec::new();
        for name in requirement.keys() {
            if mutual_tls(openapi, name) {
                continue;
            }
            match schemes.iter().position(|s| &s.name == name) {
                Some(index) => match &schemes[index].kind {
                    Kind::Unsupported(why) => bail!(format!("{context} asks for it"), "{why}"),
                    _ => together.push(index),
                },
                None => bail!(context, "security scheme {name} is not in components/securitySchemes"),
            }
        }
        if together.is_empty() {
            // `{}` (anonymous), or only the transport's: nothing for the router to ask.
            return Ok(None);
        }
        alternatives.push(together);
    }
    if alternatives.is_empty() {
        return Ok(None);
    }
    let challenge = challenge_of(openapi, alternatives.iter().flatten().map(|&index| &schemes[index]));
    let hint = alternatives
        .iter()
        .map(|together| together.iter().map(|&i| schemes[i].hint()).collect::<Vec<_>>().join(" and "))
        .collect::<Vec<_>>()
        .join(", or ");
    Ok(Some(Requirement { alternatives, challenge, hint }))
}
