//! Bounds compared in a direction: a lower bound raised or an upper one lowered (and
//! `exclusive*`, `uniqueItems`, `multipleOf`, a pattern or format set or changed) narrows what a
//! client may send; the opposite widens what it may receive — breaking too, since a client
//! holds values to the bounds it was given (the generated models' constrained strings refuse
//! what breaks them).

use serde_json::{Map, Value};

use super::{At, Schemas};
use crate::diff::{Direction, Level, Rule};

impl Schemas<'_> {
    pub(super) fn bounds(
        &mut self,
        base: &Map<String, Value>,
        head: &Map<String, Value>,
        at: &At,
        direction: Direction,
        what: &str,
    ) {
        // Lower bounds: a larger one narrows. Upper bounds: a smaller one narrows.
        for (keyword, lower) in [
            ("minimum", true),
            ("maximum", false),
            ("minLength", true),
            ("maxLength", false),
            ("minItems", true),
            ("maxItems", false),
            ("minProperties", true),
            ("maxProperties", false),
        ] {
            let (b, h) = (base.get(keyword).and_then(Value::as_f64), head.get(keyword).and_then(Value::as_f64));
            let narrowed = match (b, h) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(b), Some(h)) => (lower && h > b) || (!lower && h < b),
            };
            let widened = match (b, h) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(b), Some(h)) => (lower && h < b) || (!lower && h > b),
            };
            let shown = |v: Option<f64>| v.map_or("none".to_owned(), |v| v.to_string());
            let (b, h) = (shown(b), shown(h));
            match direction {
                Direction::Sent if narrowed => self.push(
                    Level::Breaking,
                    Rule::BoundNarrowed,
                    &at.both(keyword),
                    format!("{what}: `{keyword}` went from {b} to {h}: values the base took are refused"),
                ),
                Direction::Received if widened => self.push(
                    Level::Breaking,
                    Rule::BoundWidened,
                    &at.both(keyword),
                    format!("{what}: `{keyword}` went from {b} to {h}: values beyond what the base promised may come"),
                ),
                _ => {}
            }
        }
        for keyword in ["exclusiveMinimum", "exclusiveMaximum", "uniqueItems"] {
            let (b, h) = (base.get(keyword) == Some(&Value::Bool(true)), head.get(keyword) == Some(&Value::Bool(true)));
            match direction {
                Direction::Sent if h && !b => self.push(
                    Level::Breaking,
                    Rule::BoundNarrowed,
                    &at.both(keyword),
                    format!("{what}: `{keyword}` is now set: values the base took are refused"),
                ),
                Direction::Received if b && !h => self.push(
                    Level::Breaking,
                    Rule::BoundWidened,
                    &at.both(keyword),
                    format!("{what}: `{keyword}` is no longer set"),
                ),
                _ => {}
            }
        }
        let (b, h) = (base.get("multipleOf").and_then(Value::as_f64), head.get("multipleOf").and_then(Value::as_f64));
        let divides = |outer: f64, inner: f64| (outer / inner).fract().abs() < 1e-9;
        let sent_narrowed = match (b, h) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(b), Some(h)) => !divides(b, h),
        };
        let received_widened = match (b, h) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(b), Some(h)) => !divides(h, b),
        };
        match direction {
            Direction::Sent if sent_narrowed => self.push(
                Level::Breaking,
                Rule::BoundNarrowed,
                &at.both("multipleOf"),
                format!("{what}: `multipleOf` went from {b:?} to {h:?}: values the base took are refused"),
            ),
            Direction::Received if received_widened => self.push(
                Level::Breaking,
                Rule::BoundWidened,
                &at.both("multipleOf"),
                format!("{what}: `multipleOf` went from {b:?} to {h:?}"),
            ),
            _ => {}
        }
        for (keyword, rule) in [("pattern", Rule::PatternChanged), ("format", Rule::FormatChanged)] {
            let (b, h) = (base.get(keyword), head.get(keyword));
            if b == h
                || (direction == Direction::Sent && h.is_none())
                || (direction == Direction::Received && b.is_none())
            {
                continue;
            }
            let shown = |v: Option<&Value>| v.map_or("none".to_owned(), Value::to_string);
            let (level, consequence) = match direction {
                Direction::Sent => (Level::Breaking, "values the base took may be refused"),
                Direction::Received => (Level::Breaking, "values the base did not allow may come"),
            };
            let message = format!("{what}: `{keyword}` went from {} to {}: {consequence}", shown(b), shown(h));
            self.push(level, rule, &at.both(keyword), message);
        }
    }
}
