//! The generator's output for each sample document, compiled.

macro_rules! sample {
    ($name:ident) => {
        // Generated code names types by their full paths (so that no name in a document
        // shadows them) and is written to be included anywhere.
        #[allow(clippy::all, dead_code, unused_imports, unused_qualifications, unreachable_pub)]
        pub mod $name {
            pub mod types {
                include!(concat!(env!("OUT_DIR"), "/", stringify!($name), "/types.rs"));
            }
            pub mod client {
                include!(concat!(env!("OUT_DIR"), "/", stringify!($name), "/client.rs"));
            }
            pub mod server {
                include!(concat!(env!("OUT_DIR"), "/", stringify!($name), "/server.rs"));
            }
        }
    };
}

sample!(bounds);
sample!(discriminated);
sample!(errors);
sample!(events);
sample!(forms);
sample!(generality);
sample!(long_tail);
sample!(multipart);
sample!(nullable_and_enums);
sample!(openapi_3_1);
sample!(openapi_3_2);
sample!(pagination);
sample!(parameter_styles);
sample!(parameters_and_responses);
sample!(pet_store);
sample!(public_shapes);
sample!(query_arrays);
sample!(repairs);
sample!(security);
sample!(shop);
sample!(untypable);
sample!(webhooks);
