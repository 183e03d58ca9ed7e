//! Money rules: what a payment costs and delivers — conversion between currencies at the
//! service's rate, and the fee — as pure functions of the reference data. Amounts are integers
//! in each currency's minor unit; a rate is an exact decimal of 12 significant digits.
//!
//! Invariants the rest of the domain relies on (and the tests below hold):
//! - a payment debits exactly `amount + fees` from its balance, in the balance's currency;
//! - a conversion is made at the published rate: `to_amount` is `amount × rate_decimal`
//!   rounded down (the service never pays out more than the rate gives), and an amount computed
//!   for a wanted `to_amount` is the smallest that delivers at least it — so a client
//!   reproduces every converted amount from the rate it is shown;
//! - a published rate is within half a unit of its 12th significant digit of the exact rate
//!   the mid-market table gives;
//! - every amount shown is within `1..=MAX_AMOUNT`.

use payments_types as types;

use super::error::{Error, Result};
use super::reference::CurrencyInfo;

/// The service's margin on conversions, in thousandths: 0.5%.
const MARGIN_PER_MILLE: u128 = 5;
/// Significant digits of a published rate.
pub const SIGNIFICANT_DIGITS: u32 = 12;
/// The most decimals a rate is written with (the document's pattern allows 24).
const MAX_SCALE: u32 = 24;

/// A rate: `mantissa / 10^scale` units of `to` for one unit of `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    mantissa: u128,
    scale: u32,
}

impl Rate {
    /// `numerator / denominator` rounded half up to [`SIGNIFICANT_DIGITS`].
    fn of_ratio(numerator: u128, denominator: u128) -> Rate {
        let floor = 10u128.pow(SIGNIFICANT_DIGITS - 1);
        let mut scale = 0;
        while scale < MAX_SCALE && numerator * 10u128.pow(scale) / denominator < floor {
            scale += 1;
        }
        let mut mantissa = (numerator * 10u128.pow(scale) + denominator / 2) / denominator;
        // Rounding up can carry into a 13th digit (9.99…5 → 10.0…): drop the trailing zero.
        if mantissa >= 10u128.pow(SIGNIFICANT_DIGITS) && scale > 0 {
            mantissa /= 10;
            scale -= 1;
        }
        Rate { mantissa, scale }
    }

    /// The mid-market rate from `from` to `to`.
    pub fn mid(from: &CurrencyInfo, to: &CurrencyInfo) -> Rate {
        Rate::of_ratio(to.per_usd_micros, from.per_usd_micros)
    }

    /// The rate a conversion is made at: the exact mid-market rate less the margin.
    pub fn customer(from: &CurrencyInfo, to: &CurrencyInfo) -> Rate {
        Rate::of_ratio(to.per_usd_micros * (1000 - MARGIN_PER_MILLE), from.per_usd_micros * 1000)
    }

    /// The rate as a decimal (`1952.21518987`), trailing zeros dropped, at least one decimal.
    pub fn decimal(&self) -> String {
        let digits = format!("{:0>width$}", self.mantissa, width = self.scale as usize + 1);
        let (whole, fraction) = digits.split_at(digits.len() - self.scale as usize);
        let fraction = fraction.trim_end_matches('0');
        format!("{whole}.{}", if fraction.is_empty() { "0" } else { fraction })
    }

    /// The rate as a fixed-point integer with six decimals, rounded half up (the 1.x fields).
    pub fn micros(&self) -> u128 {
        match self.scale.checked_sub(6) {
            Some(extra) => {
                let unit = 10u128.pow(extra);
                (self.mantissa + unit / 2) / unit
            }
            None => self.mantissa * 10u128.pow(6 - self.scale),
        }
    }

    /// The published form: both decimals and the six-decimal integers.
    fn published(applied: Rate, mid: Rate) -> Result<types::ExchangeRate> {
        fn decimal<T: std::str::FromStr<Err: std::fmt::Display>>(rate: Rate) -> Result<T> {
            rate.decimal().parse().map_err(|e| Error::internal(format!("rate {rate:?}: {e}")))
        }
        Ok(types::ExchangeRate {
            rate: rate_value(applied.micros())?,
            single_rate: rate_value(mid.micros())?,
            rate_decimal: decimal(applied)?,
            single_rate_decimal: decimal(mid)?,
        })
    }
}

/// `amount` minor units of `from` converted at `rate` into minor units of `to`, rounded down
/// (the service never pays out more than the rate gives).
pub fn convert(amount: u128, rate: Rate, from: &CurrencyInfo, to: &CurrencyInfo) -> u128 {
    amount * rate.mantissa * 10u128.pow(to.minor_units) / 10u128.pow(rate.scale + from.minor_units)
}

/// The smallest amount of `from` that converts at `rate` to at least `to_amount` of `to`.
pub fn amount_for(to_amount: u128, rate: Rate, from: &CurrencyInfo, to: &CurrencyInfo) -> u128 {
    let numerator = to_amount * 10u128.pow(rate.scale + from.minor_units);
    let denominator = rate.mantissa * 10u128.pow(to.minor_units);
    numerator.div_ceil(denominator)
}

/// `amount` minor units of `from` at the exact mid-market cross rate (not rounded to six
/// decimals), rounded down: what a balance is worth in the default currency.
pub fn value_in(amount: u128, from: &CurrencyInfo, to: &CurrencyInfo) -> u128 {
    amount * to.per_usd_micros * 10u128.pow(to.minor_units) / (from.per_usd_micros * 10u128.pow(from.minor_units))
}

/// The largest amount accepted anywhere (the spec's `Amount` maximum).
pub const MAX_AMOUNT: u128 = 100_000_000_000;

/// What a payment from a balance in `from` to a recipient paid in `to` costs and delivers.
#[derive(Debug, Clone, PartialEq)]
pub struct Priced {
    /// What leaves the balance (before fees), in `from`.
    pub amount: types::Amount,
    /// What the recipient receives, in `to`.
    pub to_amount: types::Amount,
    /// The rate used, when the currencies differ.
    pub exchange_rate: Option<types::ExchangeRate>,
    /// The fee, in `from`, also taken from the balance.
    pub fees: i64,
}

impl Priced {
    /// Everything the payment takes from the balance: amount plus fees.
    pub fn debit(&self) -> Result<i64> {
        let amount = i64::try_from(self.amount.get()).map_err(Error::internal)?;
        amount.checked_add(self.fees).ok_or_else(|| Error::invalid("amount is too large"))
    }
}

/// Prices a payment given exactly one of `amount` (what leaves the balance) or `to_amount`
/// (what the recipient receives): the other is computed at the customer rate.
pub fn price(
    from: &CurrencyInfo,
    to: &CurrencyInfo,
    amount: Option<&types::Amount>,
    to_amount: Option<&types::Amount>,
) -> Result<Priced> {
    let exactly_one = || Error::invalid("give exactly one of amount and to_amount");
    if from.code == to.code {
        let amount = match (amount, to_amount) {
            (Some(a), None) | (None, Some(a)) => a.clone(),
            _ => return Err(exactly_one()),
        };
        return Ok(Priced { to_amount: amount.clone(), amount, exchange_rate: None, fees: from.payment_fee });
    }
    if !from.exchange_from {
        return Err(Error::invalid(format!(
            "{} balances cannot pay in other currencies (exchange_from is false); the recipient is paid in {}",
            from.code, to.code
        )));
    }
    let rate = Rate::customer(from, to);
    let (amount, to_amount) = match (amount, to_amount) {
        (Some(a), None) => (u128::from(a.get()), convert(u128::from(a.get()), rate, from, to)),
        (None, Some(t)) => (amount_for(u128::from(t.get()), rate, from, to), u128::from(t.get())),
        _ => return Err(exactly_one()),
    };
    if to_amount == 0 {
        return Err(Error::invalid(format!("amount is too small to convert into {}", to.code)));
    }
    let exchange_rate = Rate::published(rate, Rate::mid(from, to))?;
    Ok(Priced {
        amount: checked_amount(amount)?,
        to_amount: checked_amount(to_amount)?,
        exchange_rate: Some(exchange_rate),
        fees: from.payment_fee,
    })
}

fn rate_value(rate: u128) -> Result<std::num::NonZeroU64> {
    u64::try_from(rate).ok().and_then(std::num::NonZeroU64::new).ok_or_else(|| Error::internal(format!("rate {rate}")))
}

/// A computed amount as an API amount, or `400` when it leaves `1..=MAX_AMOUNT`.
fn checked_amount(value: u128) -> Result<types::Amount> {
    if value > MAX_AMOUNT {
        return Err(if i64::try_from(value).is_err() {
            Error::invalid("amount is too large")
        } else {
            Error::invalid(format!("the converted amount {value} is outside 1..=100000000000"))
        });
    }
    u64::try_from(value)
        .ok()
        .and_then(types::Amount::new)
        .ok_or_else(|| Error::invalid(format!("the converted amount {value} is outside 1..=100000000000")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::reference::{CURRENCIES, currency};

    fn amount(value: u64) -> types::Amount {
        types::Amount::new(value).unwrap()
    }

    #[test]
    fn conversion_round_trips_up() {
        let gbp = currency("GBP").unwrap();
        let ngn = currency("NGN").unwrap();
        let rate = Rate::customer(gbp, ngn);
        for to_amount in [1u128, 999, 1_970_325, 123_456_789] {
            let amount = amount_for(to_amount, rate, gbp, ngn);
            assert!(convert(amount, rate, gbp, ngn) >= to_amount);
            assert!(amount == 1 || convert(amount - 1, rate, gbp, ngn) < to_amount);
        }
    }

    #[test]
    fn a_payment_in_its_own_currency_costs_its_amount_plus_the_currency_fee() {
        let gbp = currency("GBP").unwrap();
        let priced = price(gbp, gbp, Some(&amount(1_000)), None).unwrap();
        assert_eq!(priced, Priced { amount: amount(1_000), to_amount: amount(1_000), exchange_rate: None, fees: 20 });
        assert_eq!(priced.debit().unwrap(), 1_020);
        // to_amount alone means the same in one currency.
        assert_eq!(price(gbp, gbp, None, Some(&amount(1_000))).unwrap(), priced);
        let ngn = currency("NGN").unwrap();
        assert_eq!(
            price(ngn, ngn, Some(&amount(10_000)), None).unwrap().fees,
            5_000,
            "fees follow the balance's currency"
        );
    }

    #[test]
    fn exactly_one_of_amount_and_to_amount() {
        let gbp = currency("GBP").unwrap();
        let ngn = currency("NGN").unwrap();
        for (from, to) in [(gbp, gbp), (gbp, ngn)] {
            assert_eq!(price(from, to, None, None), Err(Error::invalid("give exactly one of amount and to_amount")));
            assert_eq!(
                price(from, to, Some(&amount(1)), Some(&amount(1))),
                Err(Error::invalid("give exactly one of amount and to_amount"))
            );
        }
    }

    #[test]
    fn a_conversion_uses_the_mid_rate_less_half_a_percent_and_rounds_the_payout_down() {
        let gbp = currency("GBP").unwrap();
        let ngn = currency("NGN").unwrap();
        let priced = price(gbp, ngn, Some(&amount(10_000)), None).unwrap();
        let rate = priced.exchange_rate.clone().unwrap();
        // 1550 / 0.79 = 1962.0253164556… NGN per GBP; less 0.5%: 1952.2151898734…
        assert_eq!(rate.single_rate_decimal.as_str(), "1962.02531646");
        assert_eq!(rate.rate_decimal.as_str(), "1952.21518987");
        assert_eq!((rate.single_rate.get(), rate.rate.get()), (1_962_025_316, 1_952_215_190));
        // £100.00 at 1952.21518987 is ₦195,221.518987 — paid out as ₦195,221.51, never rounded up.
        assert_eq!(priced.to_amount.get(), 19_522_151);
        assert_eq!(priced.fees, 20);
        // A small rate keeps its 12 digits where six decimals kept three.
        let back = price(ngn, gbp, Some(&amount(100_000_000)), None).unwrap().exchange_rate.unwrap();
        assert_eq!((back.rate_decimal.as_str(), back.rate.get()), ("0.000507129032258", 507));
    }

    /// `text` (`"0.000508129032258"`) as `mantissa / 10^scale`, read independently of [`Rate`].
    fn parse_decimal(text: &str) -> (u128, u32) {
        let (whole, fraction) = text.split_once('.').unwrap();
        (format!("{whole}{fraction}").parse().unwrap(), fraction.len() as u32)
    }

    #[test]
    fn every_pair_reproduces_its_converted_amounts_from_the_published_rate() {
        let amounts = [1u64, 7, 99, 100, 12_345, 1_000_000, 987_654_321, 10_000_000_000];
        let mut pairs = 0;
        for from in CURRENCIES.iter().filter(|c| c.exchange_from) {
            for to in CURRENCIES.iter().filter(|c| c.code != from.code) {
                pairs += 1;
                let rate = Rate::customer(from, to);
                let published = Rate::published(rate, Rate::mid(from, to)).unwrap();
                let (mantissa, scale) = parse_decimal(published.rate_decimal.as_str());
                // At most 12 significant digits (fewer when the rate is exact, as USD -> EUR
                // 0.9154), within half a unit of the last of the exact `to / from × 0.995`.
                let digits = mantissa.to_string().len();
                assert!(digits <= 12, "{} -> {}: {}", from.code, to.code, published.rate_decimal.as_str());
                let exact_numerator = to.per_usd_micros * 995 * 10u128.pow(scale);
                let exact_denominator = from.per_usd_micros * 1000;
                let error = (mantissa * exact_denominator).abs_diff(exact_numerator);
                assert!(2 * error <= exact_denominator, "{} -> {}: {mantissa}e-{scale}", from.code, to.code);
                // The six-decimal integer is the decimal rounded.
                let micros = published.rate.get() as u128;
                assert!((micros * 10u128.pow(scale)).abs_diff(mantissa * 1_000_000) * 2 <= 10u128.pow(scale));
                for value in amounts {
                    let shift = |minor: u32| 10u128.pow(minor);
                    match price(from, to, Some(&amount(value)), None) {
                        Ok(priced) => {
                            // amount (major units) × rate, in `to`'s minor unit, rounded down.
                            let expected = u128::from(value) * mantissa * shift(to.minor_units)
                                / (shift(scale) * shift(from.minor_units));
                            assert_eq!(u128::from(priced.to_amount.get()), expected, "{} -> {}", from.code, to.code);
                            assert_eq!(priced.exchange_rate.as_ref(), Some(&published));
                        }
                        // Too small to convert, or converting beyond the largest amount.
                        Err(Error::Invalid(_)) => {
                            let expected = u128::from(value) * mantissa * shift(to.minor_units)
                                / (shift(scale) * shift(from.minor_units));
                            assert!(expected == 0 || expected > MAX_AMOUNT, "{} -> {} {value}", from.code, to.code);
                        }
                        Err(other) => panic!("{other:?}"),
                    }
                    // Given the payout instead: the smallest amount that delivers it.
                    if let Ok(priced) = price(from, to, None, Some(&amount(value))) {
                        let paid = u128::from(priced.amount.get());
                        let delivers =
                            |a: u128| a * mantissa * shift(to.minor_units) / (shift(scale) * shift(from.minor_units));
                        assert!(delivers(paid) >= u128::from(value));
                        assert!(paid == 1 || delivers(paid - 1) < u128::from(value));
                    }
                }
            }
        }
        assert_eq!(pairs, 16, "four currencies exchange from, into four others each");
    }

    #[test]
    fn a_wanted_payout_costs_the_smallest_amount_that_delivers_it() {
        let gbp = currency("GBP").unwrap();
        let ngn = currency("NGN").unwrap();
        let priced = price(gbp, ngn, None, Some(&amount(1_500_000))).unwrap();
        assert_eq!(priced.to_amount.get(), 1_500_000);
        let rate = Rate::customer(gbp, ngn);
        let paid = u128::from(priced.amount.get());
        assert!(convert(paid, rate, gbp, ngn) >= 1_500_000);
        assert!(convert(paid - 1, rate, gbp, ngn) < 1_500_000);
    }

    #[test]
    fn currencies_that_cannot_be_exchanged_from_and_amounts_too_small_or_large_are_refused() {
        let inr = currency("INR").unwrap();
        let gbp = currency("GBP").unwrap();
        let ngn = currency("NGN").unwrap();
        let refused = price(inr, gbp, Some(&amount(100_000)), None).unwrap_err();
        assert!(matches!(refused, Error::Invalid(m) if m.contains("exchange_from is false")));
        // One kobo is worth less than a penny.
        let tiny = price(ngn, gbp, Some(&amount(1)), None).unwrap_err();
        assert_eq!(tiny, Error::invalid("amount is too small to convert into GBP"));
        // The largest amount of GBP converts to more naira than any amount may be.
        let huge = price(gbp, ngn, Some(&amount(100_000_000_000)), None).unwrap_err();
        assert!(matches!(huge, Error::Invalid(m) if m.contains("outside 1..=100000000000")));
    }
}
