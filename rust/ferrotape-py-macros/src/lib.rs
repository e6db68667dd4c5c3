//! Attribute macros of the Python bindings (`ferrotape-py`).
//!
//! `#[op_errors]` makes every error a binding function raises name the op it came from, with a
//! note below the message ("while calling 'reduce_sum'"), the way PyO3 names an argument it
//! could not convert ("while processing 'axis'"). The message itself stays TensorFlow's, so
//! programs matching TF's wording keep working, and a traceback shows which op refused what.
//!
//! Why an attribute and not a line in each body: the note has to see the function's result, so
//! by hand every body would be wrapped in a closure; the attribute writes that wrapper, leaves the
//! body as written (and formatted by rustfmt), and costs nothing when the call succeeds.

use proc_macro::TokenStream;
use quote::quote;
use syn::{parse_macro_input, parse_quote, ItemFn, LitStr, ReturnType, Type};

/// Adds a note naming the op to every error the function returns. The op's name is the
/// function's own unless given: `#[op_errors("add")]` on `__add__`.
///
/// The function must return a `PyResult`; its body runs unchanged inside a closure, so `?` and
/// `return` keep their meaning.
#[proc_macro_attribute]
pub fn op_errors(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut function = parse_macro_input!(item as ItemFn);
    let name = if attr.is_empty() {
        function.sig.ident.to_string()
    } else {
        parse_macro_input!(attr as LitStr).value()
    };
    let returned = match &function.sig.output {
        ReturnType::Type(_, returned) if returns_result(returned) => returned,
        _ => {
            let msg = "#[op_errors] needs a function returning PyResult";
            return syn::Error::new_spanned(&function.sig, msg)
                .to_compile_error()
                .into();
        }
    };
    let body = &function.block;
    function.block = parse_quote!({
        let result: #returned = (|| -> #returned #body)();
        result.map_err(crate::errors::in_op(#name))
    });
    quote!(#function).into()
}

/// Whether the written return type is a `PyResult<..>` or `Result<..>` (a function that cannot
/// fail needs no note).
fn returns_result(returned: &Type) -> bool {
    match returned {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "PyResult" || s.ident == "Result"),
        _ => false,
    }
}
