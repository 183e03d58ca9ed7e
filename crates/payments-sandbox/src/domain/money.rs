//! Money rules: what a payment costs and delivers — conversion between currencies at the
//! service's rate, and the fee — as pure functions of the reference data. Amounts are integers
//! in each currency's minor unit; rates are fixed-point with six decimals.
//!
//! Invariants the rest of the domain relies on (and the tests below hold):
//! - a payment debits exactly `amount + fees` from its balance, in the balance's currency;
//! - a conversion never pays out more than the customer rate gives (rounded down), and an
//!   amount computed for a wanted `to_amount` is the smallest that delivers at least it;
//! - every amount shown is within `1..=MAX_AMOUNT`.

use payments_types as types;

use super::error::{Error, Result};
use super::reference::CurrencyInfo;

/// Fixed-point scale of rates: six decimals.
pub const RATE_SCALE: u128 = 1_000_000;
/// The service's margin on conversions, in thousandths: 0.5%.
const MARGIN_PER_MILLE: u128 = 5;

/// The mid-market rate, units of `to` per unit of `from`, six decimals.
pub fn mid_rate(from: &CurrencyInfo, to: &CurrencyInfo) -> u128 {
    (to.per_usd_micros * RATE_SCALE + from.per_usd_micros / 2) / from.per_usd_micros
}

/// The rate a conversion is made at: the mid-market rate less the margin, rounded half up.
pub fn customer_rate(mid: u128) -> u128 {
    (mid * (1000 - MARGIN_PER_MILLE) + 500) / 1000
}

/// `amount` minor units of `from` converted at `rate` into minor units of `to`, rounded down
/// (the service never pays out more than the rate gives).
pub fn convert(amount: u128, rate: u128, from: &CurrencyInfo, to: &CurrencyInfo) -> u128 {
    amount * rate * 10u128.pow(to.minor_units) / (RATE_SCALE * 10u128.pow(from.minor_units))
}

/// The smallest amount of `from` that converts at `rate` to at least `to_amount` of `to`.
pub fn amount_for(to_amount: u128, rate: u128, from: &CurrencyInfo, to: &CurrencyInfo) -> u128 {
    let numerator = to_amount * RATE_SCALE * 10u128.pow(from.minor_units);
    let denominator = rate * 10u128.pow(to.minor_units);
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
    let single = mid_rate(from, to);
    let rate = customer_rate(single);
    let (amount, to_amount) = match (amount, to_amount) {
        (Some(a), None) => (u128::from(a.get()), convert(u128::from(a.get()), rate, from, to)),
        (None, Some(t)) => (amount_for(u128::from(t.get()), rate, from, to), u128::from(t.get())),
        _ => return Err(exactly_one()),
    };
    if to_amount == 0 {
        return Err(Error::invalid(format!("amount is too small to convert into {}", to.code)));
    }
    let exchange_rate = types::ExchangeRate { rate: rate_value(rate)?, single_rate: rate_value(single)? };
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
    use crate::domain::reference::currency;

    fn amount(value: u64) -> types::Amount {
        types::Amount::new(value).unwrap()
    }

    #[test]
    fn conversion_round_trips_up() {
        let gbp = currency("GBP").unwrap();
        let ngn = currency("NGN").unwrap();
        let rate = customer_rate(mid_rate(gbp, ngn));
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
        // 1550 / 0.79 = 1962.025316 NGN per GBP; less 0.5%: 1952.215189.
        assert_eq!(rate.single_rate.get(), 1_962_025_316);
        assert_eq!(rate.rate.get(), 1_952_215_189);
        // £100.00 at 1952.215189 is ₦195,221.5189 — paid out as ₦195,221.51, never rounded up.
        assert_eq!(priced.to_amount.get(), 19_522_151);
        assert_eq!(priced.fees, 20);
    }

    #[test]
    fn a_wanted_payout_costs_the_smallest_amount_that_delivers_it() {
        let gbp = currency("GBP").unwrap();
        let ngn = currency("NGN").unwrap();
        let priced = price(gbp, ngn, None, Some(&amount(1_500_000))).unwrap();
        assert_eq!(priced.to_amount.get(), 1_500_000);
        let rate = u128::from(priced.exchange_rate.unwrap().rate.get());
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
