//! How a parameter is written on the wire: its place, its `style` and `explode` as the
//! specification's style tables write them, and the shape of its value. One set of types for all
//! three users: the generator reads them from a document (owning their text: `Wire<String,
//! Vec<(String, Leaf)>>`), and the servers and clients it writes hold them as constants (the
//! defaults, `&'static` text), which the server's `styles` and the client's `client::styles`
//! read and write.

/// Where a parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "server", derive(serde::Serialize, serde::Deserialize))]
pub enum Place {
    Path,
    Query,
    Header,
    Cookie,
}

/// How a parameter is written: its `style`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "server", derive(serde::Serialize, serde::Deserialize))]
pub enum Style {
    Form,
    SpaceDelimited,
    PipeDelimited,
    DeepObject,
    Simple,
    Label,
    Matrix,
    /// OpenAPI 3.2's cookie style: as `form`, but values are not percent-encoded.
    Cookie,
}

/// The JSON type a piece of text is read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "server", derive(serde::Serialize, serde::Deserialize))]
pub enum Leaf {
    String,
    Integer,
    Number,
    Boolean,
}

/// What a parameter's value is; `F` holds an object's properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "server", derive(serde::Serialize, serde::Deserialize))]
pub enum Shape<F = &'static [(&'static str, Leaf)]> {
    Scalar(Leaf),
    Array(Leaf),
    /// An object of scalar properties: their names and types.
    Object(F),
    /// A scalar or an object of scalar properties (Stripe's range filters: `created=5` or
    /// `created[gte]=5`), written only as a `deepObject` query parameter.
    ScalarOrObject(Leaf, F),
    /// Any value, nested as deep as its schema goes, written only as a `deepObject` query
    /// parameter in brackets, as a form body writes it (Stripe's `lines[0][amount]=5`,
    /// `customer_details[address][city]=Paris`): see `forms`.
    Nested,
    /// Anything else (a `oneOf`, an array of objects) outside `deepObject`: one text, as the
    /// default styles read it, and refused by the generator in any other style.
    Opaque,
}

/// A parameter as the document writes it; `N` holds its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "server", derive(serde::Serialize, serde::Deserialize))]
pub struct Wire<N = &'static str, F = &'static [(&'static str, Leaf)]> {
    pub place: Place,
    pub name: N,
    pub style: Style,
    pub explode: bool,
    pub shape: Shape<F>,
}

/// A parameter as the generated server names it: one short line each.
impl Wire {
    pub const fn path(name: &'static str, style: Style, explode: bool, shape: Shape) -> Self {
        Self { place: Place::Path, name, style, explode, shape }
    }

    pub const fn query(name: &'static str, style: Style, explode: bool, shape: Shape) -> Self {
        Self { place: Place::Query, name, style, explode, shape }
    }

    pub const fn header(name: &'static str, style: Style, explode: bool, shape: Shape) -> Self {
        Self { place: Place::Header, name, style, explode, shape }
    }

    pub const fn cookie(name: &'static str, style: Style, explode: bool, shape: Shape) -> Self {
        Self { place: Place::Cookie, name, style, explode, shape }
    }
}

impl<N, F> Wire<N, F> {
    /// Whether the defaults serve it (the serde paths of the server's runtime): a query
    /// parameter in `form`, exploded, a scalar or an array; a path or header parameter,
    /// `simple`, a scalar.
    pub fn plain(&self) -> bool {
        let scalar = matches!(self.shape, Shape::Scalar(_) | Shape::Opaque);
        match self.place {
            Place::Query => self.style == Style::Form && self.explode && !matches!(self.shape, Shape::Object(_)),
            Place::Path => self.style == Style::Simple && scalar,
            Place::Header => scalar,
            Place::Cookie => false,
        }
    }

    /// Whether progenitor's client writes it as the document says: what [`Wire::plain`] is, and
    /// a query object in `form` style, exploded (each property its own pair, as serde writes a
    /// struct into a query).
    pub fn client_writes(&self) -> bool {
        self.plain()
            || (self.place == Place::Query
                && self.style == Style::Form
                && self.explode
                && matches!(self.shape, Shape::Object(_)))
    }
}
