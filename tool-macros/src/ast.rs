//! The model of a `#[tool]` (`#[prompt]`, `#[resource]`) function: its parameters, their helper
//! attributes, its docs.
//!
//! `ToolFn::from_syn` reads the syntax once and keeps the original tokens for spans. It never
//! stops at the first problem: every error found is collected for the caller to report.

use crate::args::Kind;
use crate::doc::{self, DocLine};
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, FnArg, Ident, ItemFn, LitStr, Pat, Type};

/// Type names the runtime fills in itself. What a parameter is, is decided by its type (so an
/// alias such as `type Db = State<Pool>` works); a parameter spelled with one of these names
/// is also known to the macro as injected, for the checks of docs and examples, and the
/// expansion asks the compiler to confirm the type really is the runtime's, so a user type
/// of the same name gets a clear error.
pub const INJECTED_TYPE_NAMES: [&str; 5] =
    ["State", "CallContext", "Progress", "Logger", "Cancellation"];

pub struct ToolFn {
    pub item: ItemFn,
    pub ident: Ident,
    pub is_async: bool,
    pub params: Vec<Param>,
    /// The doc lines of the function, with `origin` indexing into `doc_spans`.
    pub doc_lines: Vec<DocLine>,
    pub doc_spans: Vec<Span>,
    pub output: Option<Type>,
}

pub struct Param {
    pub ident: Ident,
    /// The name callers use: the identifier, or `#[arg(rename = "...")]`.
    pub wire_name: String,
    pub wire_span: Span,
    pub ty: Type,
    pub doc: Option<String>,
    pub default: ParamDefault,
    pub injected: bool,
    /// Spelled `Option<...>`; the expansion confirms it is `core::option::Option`.
    pub spelled_option: bool,
    /// `#[arg(complete = path)]`: the function that completes this argument.
    pub complete: Option<syn::Path>,
    /// `#[arg(header = "Name")]`: the value is mirrored in the HTTP header
    /// `Mcp-Param-Name` (`x-mcp-header` in the schema).
    pub header: Option<LitStr>,
    /// `#[arg(range(min = .., max = ..))]`: bounds of a number.
    pub range: Option<Bounds>,
    /// `#[arg(length(min = .., max = ..))]`: bounds of a string's or a list's length.
    pub length: Option<Bounds>,
    /// `#[arg(pattern = "...")]`: a regular expression a string must match.
    pub pattern: Option<Pattern>,
}

/// The `min` and `max` of a `range(...)` or `length(...)`.
pub struct Bounds {
    /// The `range` or `length` key, where errors about the type point.
    pub span: Span,
    pub min: Option<Bound>,
    pub max: Option<Bound>,
}

/// A `pattern`, as written and as the runtime's validator reads it.
pub struct Pattern {
    pub literal: LitStr,
    pub regex: tool_rules::Pattern,
}

impl Pattern {
    /// Reads a JSON Schema (ECMA-262) pattern with the rules the runtime's validator uses, so
    /// that what the macro accepts and matches here is exactly what calls are checked
    /// against.
    fn read(literal: LitStr) -> syn::Result<Pattern> {
        match tool_rules::Pattern::new(&literal.value()) {
            Ok(regex) => Ok(Pattern { literal, regex }),
            Err(reason) => Err(syn::Error::new(
                literal.span(),
                format!("this pattern is refused: {reason}"),
            )),
        }
    }

    /// Whether `text` has a match (anywhere, as JSON Schema's `pattern` says).
    pub fn matches(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

/// One bound, as written.
#[derive(Clone, Copy)]
pub enum Bound {
    Integer(i64),
    Number(f64),
}

impl Bound {
    pub fn as_f64(self) -> f64 {
        match self {
            // Bounds are written literals: far inside f64's exact integers in practice.
            #[allow(clippy::cast_precision_loss)]
            Bound::Integer(value) => value as f64,
            Bound::Number(value) => value,
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Integer(value) => value.fmt(f),
            Bound::Number(value) => value.fmt(f),
        }
    }
}

pub enum ParamDefault {
    None,
    /// `#[arg(default)]`: `Default::default()`.
    Trait(Span),
    /// `#[arg(default = expr)]`.
    Expr(Box<Expr>),
}

/// Standard types that are plainly arguments and never `Option`s: a parameter of one of
/// these is known required without asking the compiler. Any other name may be an alias (of
/// `Option<T>`, of `State<T>`), which only the compiler can see through.
const PLAIN_ARGUMENT_TYPE_NAMES: [&str; 28] = [
    "String", "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32",
    "u64", "u128", "usize", "f32", "f64", "Vec", "VecDeque", "HashMap", "BTreeMap", "HashSet",
    "BTreeSet", "IndexMap", "Value", "PathBuf", "Box", "Arc",
];

impl Param {
    /// Whether a caller may leave this parameter out, as far as the macro can see.
    pub fn optional(&self) -> bool {
        self.spelled_option || !matches!(self.default, ParamDefault::None)
    }

    /// Whether the macro can tell, from the spelling alone, that this is an argument the
    /// caller must give unless it has a default: a standard type, an array or a tuple.
    pub fn surely_an_argument(&self) -> bool {
        if !matches!(self.default, ParamDefault::None) {
            return true;
        }
        match &self.ty {
            Type::Array(_) | Type::Tuple(_) | Type::Slice(_) => true,
            ty => last_segment(ty).is_some_and(|segment| {
                PLAIN_ARGUMENT_TYPE_NAMES
                    .iter()
                    .any(|name| segment.ident == name)
            }),
        }
    }
}

impl ToolFn {
    pub fn from_syn(item: ItemFn, kind: Kind, errors: &mut Vec<syn::Error>) -> ToolFn {
        let sig = &item.sig;
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            errors.push(syn::Error::new_spanned(
                &sig.generics,
                format!(
                    "a {attribute} function cannot be generic: its schema is built from \
                     concrete parameter types; put {attribute} on a wrapper that calls this \
                     function with the types a model should use, or build the {noun} at run \
                     time with `{dynamic}`",
                    attribute = kind.attribute(),
                    noun = kind.noun(),
                    dynamic = match kind {
                        Kind::Tool => "DynamicTool",
                        Kind::Prompt => "DynamicPrompt",
                        Kind::Resource => "DynamicResource",
                    }
                ),
            ));
        }
        if let syn::Safety::Unsafe(unsafety) = &sig.safety {
            errors.push(syn::Error::new_spanned(
                unsafety,
                format!(
                    "a {} function cannot be `unsafe`: callers reach it from JSON",
                    kind.attribute()
                ),
            ));
        }
        if let Some(variadic) = &sig.variadic {
            errors.push(syn::Error::new_spanned(
                variadic,
                format!("a {} function cannot be variadic", kind.attribute()),
            ));
        }
        let output = match &sig.output {
            syn::ReturnType::Default => None,
            syn::ReturnType::Type(_, ty) => {
                if let Type::ImplTrait(_) = **ty {
                    errors.push(syn::Error::new_spanned(
                        ty,
                        format!(
                            "a {} function must return a concrete type, not `impl Trait`: \
                         the output schema is built from it",
                            kind.attribute()
                        ),
                    ));
                }
                Some((**ty).clone())
            }
        };

        let (doc_lines, doc_spans) = read_doc_attributes(&item.attrs, kind, errors);
        let params = sig
            .inputs
            .iter()
            .filter_map(|input| Param::from_syn(input, kind, errors))
            .collect();

        ToolFn {
            ident: sig.ident.clone(),
            is_async: sig.asyncness.is_some(),
            params,
            doc_lines,
            doc_spans,
            output,
            item,
        }
    }

    /// The function as the user wrote it, minus the helper attributes the compiler would
    /// reject on parameters (`#[arg]` and parameter doc comments).
    pub fn stripped_item(&self) -> ItemFn {
        strip_param_attributes(self.item.clone())
    }
}

/// Removes `#[arg]` and `#[doc]` from parameters; used by the expansion and the fallback.
pub fn strip_param_attributes(mut item: ItemFn) -> ItemFn {
    for input in &mut item.sig.inputs {
        if let FnArg::Typed(pat_type) = input {
            pat_type
                .attrs
                .retain(|a| !a.path().is_ident("arg") && !a.path().is_ident("doc"));
        }
    }
    item
}

/// A parameter's type is owned and concrete: arguments are read from JSON that is gone
/// once the function runs, and a schema needs a type to describe.
fn check_parameter_type(ty: &Type, kind: Kind, errors: &mut Vec<syn::Error>) {
    if let Some(borrowed) = borrowed_part(ty) {
        let owned = match borrowed {
            Type::Reference(reference) => owned_suggestion(&reference.elem),
            _ => "an owned type".to_owned(),
        };
        errors.push(syn::Error::new_spanned(
            borrowed,
            format!(
                "a {} parameter cannot borrow: arguments are read from JSON that is gone when \
                 the {} runs; take {owned} instead",
                kind.attribute(),
                kind.noun()
            ),
        ));
    } else if contains_impl_trait(ty) {
        errors.push(syn::Error::new_spanned(
            ty,
            format!(
                "a {} parameter cannot be `impl Trait`: name a concrete type that implements \
                 serde::Deserialize and schemars::JsonSchema",
                kind.attribute()
            ),
        ));
    }
}

impl Param {
    fn from_syn(input: &FnArg, kind: Kind, errors: &mut Vec<syn::Error>) -> Option<Param> {
        let pat_type = match input {
            FnArg::Receiver(receiver) => {
                errors.push(syn::Error::new_spanned(
                    receiver,
                    format!(
                        "a {} function cannot take `self`: write a free function, and reach \
                         shared data through a `State<T>` parameter",
                        kind.attribute()
                    ),
                ));
                return None;
            }
            FnArg::Typed(pat_type) => pat_type,
        };
        let ident = match &*pat_type.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
            other => {
                errors.push(syn::Error::new_spanned(
                    other,
                    format!(
                        "a {} parameter must be a plain name: its name is the argument's name \
                         in the schema",
                        kind.attribute()
                    ),
                ));
                return None;
            }
        };
        let ty = (*pat_type.ty).clone();
        check_parameter_type(&ty, kind, errors);
        let mut param = Param {
            wire_name: ident.to_string().trim_start_matches("r#").to_owned(),
            wire_span: ident.span(),
            ident,
            injected: is_injected_spelling(&ty),
            spelled_option: is_option_spelling(&ty),
            ty,
            doc: None,
            default: ParamDefault::None,
            complete: None,
            header: None,
            range: None,
            length: None,
            pattern: None,
        };
        param.read_attributes(&pat_type.attrs, kind, errors);
        param.check_injected(errors);
        Some(param)
    }

    /// Reads the parameter's doc comment and its `#[arg(...)]`.
    fn read_attributes(&mut self, attrs: &[Attribute], kind: Kind, errors: &mut Vec<syn::Error>) {
        let mut doc_lines = Vec::new();
        for attr in attrs {
            if attr.path().is_ident("doc") {
                if let Some(text) = doc_string(attr, kind, errors) {
                    doc_lines.extend(doc::split_attribute(&text, 0));
                }
            } else if attr.path().is_ident("arg") {
                self.read_arg_attribute(attr, errors);
            }
        }
        if !doc_lines.is_empty() {
            let texts: Vec<&str> = doc_lines.iter().map(|l| l.text.as_str()).collect();
            self.doc = Some(texts.join("\n").trim().to_owned());
        }
    }

    /// A parameter the runtime fills in takes neither limits nor a default.
    fn check_injected(&self, errors: &mut Vec<syn::Error>) {
        if !self.injected {
            return;
        }
        if self.range.is_some() || self.length.is_some() || self.pattern.is_some() {
            errors.push(syn::Error::new_spanned(
                &self.ty,
                "a parameter filled in by the runtime takes no limits: callers never give it",
            ));
        }
        if !matches!(self.default, ParamDefault::None) {
            errors.push(syn::Error::new_spanned(
                &self.ty,
                "a parameter filled in by the runtime cannot have a default",
            ));
        }
    }

    fn read_arg_attribute(&mut self, attr: &Attribute, errors: &mut Vec<syn::Error>) {
        let mut seen: Vec<String> = Vec::new();
        let result = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            if seen.contains(&key) {
                return Err(meta.error(format!("`{key}` is given more than once")));
            }
            match key.as_str() {
                "default" => {
                    self.default = if meta.input.peek(syn::Token![=]) {
                        ParamDefault::Expr(Box::new(meta.value()?.parse()?))
                    } else {
                        ParamDefault::Trait(meta.path.span())
                    };
                }
                "rename" => {
                    let name: LitStr = meta.value()?.parse()?;
                    self.wire_name = name.value();
                    self.wire_span = name.span();
                }
                "inject" => self.injected = true,
                "complete" => self.complete = Some(meta.value()?.parse()?),
                "header" => self.header = Some(meta.value()?.parse()?),
                "range" => self.range = Some(read_bounds(&meta, "range")?),
                "length" => self.length = Some(read_bounds(&meta, "length")?),
                "pattern" => self.pattern = Some(Pattern::read(meta.value()?.parse()?)?),
                _ => {
                    return Err(meta.error(format!(
                        "unknown #[arg] argument `{}`; accepted: default, default = <expr>, \
                         rename = \"...\", inject, complete = <function>, header = \"Name\", \
                         range(min = .., max = ..), length(min = .., max = ..), pattern = \"...\"",
                        meta.path.to_token_stream().to_string().replace(' ', "")
                    )))
                }
            }
            seen.push(key);
            Ok(())
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
}

/// Reads `range(min = .., max = ..)` or `length(..)` (whose bounds are whole and not
/// negative): at least one bound, and `min` not above `max`.
fn read_bounds(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Bounds> {
    let whole = key == "length";
    let mut bounds = Bounds {
        span: meta.path.span(),
        min: None,
        max: None,
    };
    let content;
    syn::parenthesized!(content in meta.input);
    let tokens: TokenStream = content.parse()?;
    let parse_bound = syn::meta::parser(|inner| {
        let slot = if inner.path.is_ident("min") {
            &mut bounds.min
        } else if inner.path.is_ident("max") {
            &mut bounds.max
        } else {
            return Err(inner.error(format!("`{key}` takes `min = ..` and `max = ..`")));
        };
        if slot.is_some() {
            return Err(inner.error("given more than once"));
        }
        let expr: Expr = inner.value()?.parse()?;
        let bound = read_bound(&expr)?;
        if whole && !matches!(bound, Bound::Integer(value) if value >= 0) {
            return Err(syn::Error::new_spanned(
                &expr,
                "a length is a whole number, 0 or more",
            ));
        }
        *slot = Some(bound);
        Ok(())
    });
    syn::parse::Parser::parse2(parse_bound, tokens)?;
    match (bounds.min, bounds.max) {
        (None, None) => Err(meta.error(format!(
            "`{key}` needs `min = ..`, `max = ..` or both, e.g. {key}(min = 1, max = 3)"
        ))),
        (Some(min), Some(max)) if min.as_f64() > max.as_f64() => Err(meta.error(format!(
            "`{key}` has min {min} above max {max}: no value fits"
        ))),
        _ => Ok(bounds),
    }
}

/// A number literal, possibly negative.
fn read_bound(expr: &Expr) -> syn::Result<Bound> {
    let (negative, literal) = match expr {
        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Neg(_)) => (true, &*unary.expr),
        other => (false, other),
    };
    match literal {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => {
            let text = if negative {
                format!("-{}", int.base10_digits())
            } else {
                int.base10_digits().to_owned()
            };
            text.parse::<i64>()
                .map(Bound::Integer)
                .map_err(|_| syn::Error::new_spanned(expr, "this bound does not fit in an i64"))
        }
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(float),
            ..
        }) => float
            .base10_parse::<f64>()
            .map(|value| Bound::Number(if negative { -value } else { value }))
            .map_err(|error| syn::Error::new_spanned(expr, error.to_string())),
        _ => Err(syn::Error::new_spanned(
            expr,
            "a bound is a number literal, such as 1, -5 or 0.5",
        )),
    }
}

/// Reads every `#[doc]` attribute of the function into lines, remembering each one's span.
fn read_doc_attributes(
    attrs: &[Attribute],
    kind: Kind,
    errors: &mut Vec<syn::Error>,
) -> (Vec<DocLine>, Vec<Span>) {
    let mut lines = Vec::new();
    let mut spans = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let Some(text) = doc_string(attr, kind, errors) {
            let origin = spans.len();
            spans.push(doc_span(attr));
            lines.extend(doc::split_attribute(&text, origin));
        }
    }
    (lines, spans)
}

fn doc_span(attr: &Attribute) -> Span {
    match &attr.meta {
        syn::Meta::NameValue(nv) => nv.value.span(),
        other => other.span(),
    }
}

/// The text of a `#[doc = ...]` attribute: a string literal, or `concat!` of literals.
fn doc_string(attr: &Attribute, kind: Kind, errors: &mut Vec<syn::Error>) -> Option<String> {
    let syn::Meta::NameValue(nv) = &attr.meta else {
        return None; // `#[doc(hidden)]` and friends carry no text.
    };
    match &nv.value {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        Expr::Macro(mac) if mac.mac.path.is_ident("concat") => {
            match concat_literals(mac.mac.tokens.clone(), kind) {
                Ok(text) => Some(text),
                Err(error) => {
                    errors.push(error);
                    None
                }
            }
        }
        other => {
            errors.push(syn::Error::new_spanned(
                other,
                format!(
                    "{} reads doc comments at compile time and cannot expand this macro; use \
                     a string literal, `concat!` of literals, or #[{}(description = \"...\")]",
                    kind.attribute(),
                    kind.noun()
                ),
            ));
            None
        }
    }
}

fn concat_literals(tokens: TokenStream, kind: Kind) -> syn::Result<String> {
    let parser = syn::punctuated::Punctuated::<syn::Lit, syn::Token![,]>::parse_terminated;
    let literals = syn::parse::Parser::parse2(parser, tokens)?;
    let mut out = String::new();
    for lit in literals {
        match lit {
            syn::Lit::Str(s) => out.push_str(&s.value()),
            syn::Lit::Char(c) => out.push(c.value()),
            syn::Lit::Int(i) => out.push_str(i.base10_digits()),
            syn::Lit::Float(f) => out.push_str(f.base10_digits()),
            syn::Lit::Bool(b) => out.push_str(if b.value { "true" } else { "false" }),
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    format!(
                        "{} can only read `concat!` of plain literals in doc comments",
                        kind.attribute()
                    ),
                ))
            }
        }
    }
    Ok(out)
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Group(group) => last_segment(&group.elem),
        Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

fn is_injected_spelling(ty: &Type) -> bool {
    last_segment(ty)
        .is_some_and(|segment| INJECTED_TYPE_NAMES.iter().any(|name| segment.ident == name))
}

fn is_option_spelling(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|segment| {
        segment.ident == "Option"
            && matches!(
                &segment.arguments,
                syn::PathArguments::AngleBracketed(args) if args.args.len() == 1
            )
    })
}

/// The part of a type that borrows (a reference, or a type with a non-`'static` lifetime).
fn borrowed_part(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Reference(reference) => match &reference.lifetime {
            Some(lifetime) if lifetime.ident == "static" => borrowed_part(&reference.elem),
            _ => Some(ty),
        },
        Type::Group(g) => borrowed_part(&g.elem),
        Type::Paren(p) => borrowed_part(&p.elem),
        Type::Array(a) => borrowed_part(&a.elem),
        Type::Slice(s) => borrowed_part(&s.elem),
        Type::Tuple(t) => t.elems.iter().find_map(borrowed_part),
        Type::Path(p) => p
            .path
            .segments
            .iter()
            .find_map(|segment| match &segment.arguments {
                syn::PathArguments::AngleBracketed(args) => {
                    args.args.iter().find_map(|arg| match arg {
                        syn::GenericArgument::Lifetime(lifetime) if lifetime.ident != "static" => {
                            Some(ty)
                        }
                        syn::GenericArgument::Type(inner) => borrowed_part(inner),
                        _ => None,
                    })
                }
                _ => None,
            }),
        _ => None,
    }
}

/// The owned type to suggest for a borrowed one: `&str` -> `String`, `&[T]` -> `Vec<T>`.
fn owned_suggestion(elem: &Type) -> String {
    match elem {
        Type::Path(path) if path.path.is_ident("str") => "`String`".to_owned(),
        Type::Slice(slice) => format!("`Vec<{}>`", slice.elem.to_token_stream()),
        other => format!("`{}`", other.to_token_stream()),
    }
}

fn contains_impl_trait(ty: &Type) -> bool {
    match ty {
        Type::ImplTrait(_) => true,
        Type::Group(g) => contains_impl_trait(&g.elem),
        Type::Paren(p) => contains_impl_trait(&p.elem),
        Type::Array(a) => contains_impl_trait(&a.elem),
        Type::Slice(s) => contains_impl_trait(&s.elem),
        Type::Reference(r) => contains_impl_trait(&r.elem),
        Type::Tuple(t) => t.elems.iter().any(contains_impl_trait),
        Type::Path(p) => p.path.segments.iter().any(|segment| {
            match &segment.arguments {
            syn::PathArguments::AngleBracketed(args) => args.args.iter().any(|arg| {
                matches!(arg, syn::GenericArgument::Type(inner) if contains_impl_trait(inner))
            }),
            _ => false,
        }
        }),
        _ => false,
    }
}
