//! Reference data and the rules that hang off it: currencies, countries, the bank-account fields
//! each country and currency needs (and their validation), exchange rates and fees. All of it is
//! fixed data compiled in, so every sandbox answers the same.

use super::error::{Error, Result};
use payments_types as types;

#[derive(Debug)]
pub struct CurrencyInfo {
    pub code: &'static str,
    pub name: &'static str,
    pub minor_units: u32,
    pub exchange_from: bool,
    pub supports_virtual_account: bool,
    /// The market (country) of payment requests in this currency, when they are supported.
    pub payment_request_market: Option<&'static str>,
    /// Units of this currency for one US dollar, six decimals: the mid-market table every rate
    /// is derived from.
    pub per_usd_micros: u128,
    /// The fee of a payment from a balance in this currency, in its minor unit.
    pub payment_fee: i64,
}

impl CurrencyInfo {
    /// The currency's code as the API types it, checked once: `CurrencyCode`'s parse runs its
    /// pattern, a cost of every balance shown (instructions per request, BENCHMARKS.md).
    pub fn typed_code(&self) -> types::CurrencyCode {
        static CODES: std::sync::LazyLock<Vec<types::CurrencyCode>> =
            std::sync::LazyLock::new(|| CURRENCIES.iter().map(|c| code(c.code)).collect());
        // Found by address (a static's entries have one each): cheaper than comparing codes.
        match CURRENCIES.iter().position(|c| std::ptr::eq(c, self)) {
            Some(at) => CODES[at].clone(),
            None => code(self.code),
        }
    }
}

pub static CURRENCIES: &[CurrencyInfo] = &[
    CurrencyInfo {
        code: "EUR",
        name: "Euro",
        minor_units: 2,
        exchange_from: true,
        supports_virtual_account: false,
        payment_request_market: None,
        per_usd_micros: 920_000,
        payment_fee: 20,
    },
    CurrencyInfo {
        code: "GBP",
        name: "British Pound",
        minor_units: 2,
        exchange_from: true,
        supports_virtual_account: false,
        payment_request_market: Some("GB"),
        per_usd_micros: 790_000,
        payment_fee: 20,
    },
    CurrencyInfo {
        code: "INR",
        name: "Indian Rupee",
        minor_units: 2,
        exchange_from: false,
        supports_virtual_account: true,
        payment_request_market: None,
        per_usd_micros: 83_500_000,
        payment_fee: 1_000,
    },
    CurrencyInfo {
        code: "NGN",
        name: "Nigerian Naira",
        minor_units: 2,
        exchange_from: true,
        supports_virtual_account: true,
        payment_request_market: Some("NG"),
        per_usd_micros: 1_550_000_000,
        payment_fee: 5_000,
    },
    CurrencyInfo {
        code: "USD",
        name: "US Dollar",
        minor_units: 2,
        exchange_from: true,
        supports_virtual_account: false,
        payment_request_market: Some("US"),
        per_usd_micros: 1_000_000,
        payment_fee: 25,
    },
];

/// Euro-area countries recipients can be paid in, with their IBAN lengths.
const EURO_COUNTRIES: &[(&str, &str, usize)] = &[
    ("AT", "Austria", 20),
    ("BE", "Belgium", 16),
    ("DE", "Germany", 22),
    ("ES", "Spain", 24),
    ("FI", "Finland", 18),
    ("FR", "France", 27),
    ("IE", "Ireland", 22),
    ("IT", "Italy", 27),
    ("NL", "Netherlands", 18),
    ("PT", "Portugal", 25),
];

pub fn currency(code: &str) -> Option<&'static CurrencyInfo> {
    CURRENCIES.iter().find(|c| c.code == code)
}

/// A currency balances can hold, or `400` naming the field.
pub fn supported_currency(field: &str, code: &str) -> Result<&'static CurrencyInfo> {
    currency(code)
        .ok_or_else(|| Error::invalid(format!("{field}: currency {code:?} is not supported (see GET /currencies)")))
}

/// Every currency, as `GET /currencies` shows it: built once (its codes are parsed through the
/// generated types' pattern checks), then cloned.
pub fn currencies() -> Vec<types::Currency> {
    static ALL: std::sync::LazyLock<Vec<types::Currency>> = std::sync::LazyLock::new(|| {
        CURRENCIES
            .iter()
            .map(|c| types::Currency {
                currency_code: code(c.code),
                currency_name: c.name.into(),
                minor_units: c.minor_units as i32,
                exchange_from: c.exchange_from,
                supports_virtual_account: c.supports_virtual_account,
                supports_payment_requests: c.payment_request_market.is_some(),
            })
            .collect()
    });
    ALL.clone()
}

pub fn countries() -> Vec<types::Country> {
    let mut list: Vec<(&str, &str, &str)> = vec![
        ("GB", "United Kingdom", "GBP"),
        ("IN", "India", "INR"),
        ("NG", "Nigeria", "NGN"),
        ("US", "United States", "USD"),
    ];
    list.extend(EURO_COUNTRIES.iter().map(|(alpha2, name, _)| (*alpha2, *name, "EUR")));
    list.sort();
    list.into_iter()
        .map(|(alpha2, name, currency)| types::Country {
            alpha2: code(alpha2),
            country_name: name.into(),
            currencies: vec![code(currency)],
        })
        .collect()
}

/// Parses a code the service itself produced into its constrained type.
pub fn code<T: std::str::FromStr>(value: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    value.parse().expect("reference data holds valid codes")
}

// ---------------------------------------------------------------------------------------------
// Bank fields

struct Field {
    name: &'static str,
    label: &'static str,
    number: bool,
    length: Option<i32>,
}

const ACCOUNT_NAME: Field = Field { name: "account_name", label: "Account holder's name", number: false, length: None };

fn fields(country: &str, currency: &str) -> Option<Vec<Field>> {
    let specific = match (country, currency) {
        ("GB", "GBP") => vec![
            Field { name: "sort_code", label: "Sort code", number: true, length: Some(6) },
            Field { name: "account_number", label: "Account number", number: true, length: Some(8) },
        ],
        ("NG", "NGN") => vec![
            Field { name: "bank_code", label: "Bank code", number: true, length: Some(3) },
            Field { name: "account_number", label: "Account number (NUBAN)", number: true, length: Some(10) },
        ],
        ("IN", "INR") => vec![
            Field { name: "ifsc", label: "IFSC", number: false, length: Some(11) },
            Field { name: "account_number", label: "Account number", number: true, length: None },
        ],
        ("US", "USD") => vec![
            Field { name: "routing_number", label: "ABA routing number", number: true, length: Some(9) },
            Field { name: "account_number", label: "Account number", number: true, length: None },
        ],
        (c, "EUR") if EURO_COUNTRIES.iter().any(|(alpha2, ..)| *alpha2 == c) => vec![
            Field { name: "iban", label: "IBAN", number: false, length: None },
            Field { name: "bic", label: "BIC (SWIFT code)", number: false, length: None },
        ],
        _ => return None,
    };
    let mut all = vec![ACCOUNT_NAME];
    all.extend(specific);
    Some(all)
}

pub fn bank_fields(country: &str, currency: &str) -> Result<Vec<types::BankField>> {
    let fields = fields(country, currency).ok_or_else(|| unsupported_pair(country, currency))?;
    Ok(fields
        .into_iter()
        .map(|f| types::BankField {
            name: f.name.into(),
            label: f.label.into(),
            type_: if f.number { types::BankFieldType::Number } else { types::BankFieldType::Text },
            length: f.length,
        })
        .collect())
}

fn unsupported_pair(country: &str, currency: &str) -> Error {
    Error::invalid(format!("country {country:?} with currency {currency:?} is not supported (see GET /countries)"))
}

/// Bank details checked and normalised, with what the bank knows about them.
pub struct CheckedAccount {
    /// The account as stored: normalised values, `bank_name` filled in.
    pub bank_account: types::BankAccount,
    pub bank_name: String,
    /// Sort code, bank code, IFSC, routing number or BIC.
    pub bank_id: String,
    /// The account number, or the IBAN.
    pub account_number: String,
    /// The holder's name as the bank resolves it, for countries whose banks do (GB, NG).
    pub resolved_name: Option<String>,
}

/// Checks `account` for `country`: exactly the keys `GET /bankfields` lists (besides
/// `currency`, and `bank_name`, which the service fills in), each in its format.
/// `require_name` is false for `/recipients/validate`, where the bank may supply the name.
pub fn check_bank_account(country: &str, account: &types::BankAccount, require_name: bool) -> Result<CheckedAccount> {
    let currency = account.currency.to_string();
    let fields = fields(country, &currency).ok_or_else(|| unsupported_pair(country, &currency))?;
    let value = serde_json::to_value(account).map_err(Error::internal)?;
    let object = value.as_object().ok_or_else(|| Error::internal("a bank account is a JSON object"))?;
    let given = |name: &str| object.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    for (key, value) in object {
        let listed = key == "currency" || key == "bank_name" || fields.iter().any(|f| f.name == key);
        if !listed && !value.is_null() {
            return Err(Error::invalid(format!(
                "bank_account.{key} is not a field for {country}/{currency} (see GET /bankfields)"
            )));
        }
    }
    let mut normalised = serde_json::Map::new();
    normalised.insert("currency".into(), currency.clone().into());
    for field in &fields {
        let Some(raw) = given(field.name) else {
            if field.name == "account_name" && !require_name {
                continue;
            }
            return Err(Error::invalid(format!("bank_account.{} is required for {country}/{currency}", field.name)));
        };
        let clean = normalise(field.name, &raw);
        check_field(country, field, &clean)
            .map_err(|rule| Error::invalid(format!("bank_account.{}: {raw:?} {rule}", field.name)))?;
        normalised.insert(field.name.into(), clean.into());
    }
    let text = |key: &str| normalised.get(key).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
    let (bank_id, account_number) = match currency.as_str() {
        "GBP" => (text("sort_code"), text("account_number")),
        "NGN" => (text("bank_code"), text("account_number")),
        "INR" => (text("ifsc"), text("account_number")),
        "USD" => (text("routing_number"), text("account_number")),
        _ => (text("bic"), text("iban")),
    };
    let bank_name =
        bank_name(country, &currency, &bank_id).map_err(|rule| Error::invalid(format!("bank_account: {rule}")))?;
    normalised.insert("bank_name".into(), bank_name.clone().into());
    let resolved_name = matches!(country, "GB" | "NG").then(|| holder_name(country, &bank_id, &account_number));
    let bank_account = serde_json::from_value(serde_json::Value::Object(normalised))
        .map_err(|e| Error::invalid(format!("bank_account: {e}")))?;
    Ok(CheckedAccount { bank_account, bank_name, bank_id, account_number, resolved_name })
}

fn normalise(field: &str, raw: &str) -> String {
    match field {
        "account_name" => raw.trim().to_owned(),
        "sort_code" => raw.replace('-', ""),
        "iban" => raw.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_uppercase(),
        "bic" | "ifsc" => raw.trim().to_ascii_uppercase(),
        _ => raw.to_owned(),
    }
}

fn digits(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
}

/// The rule a bank detail breaks, as the caller reads it after the field's name and value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Broken {
    #[error("must not be blank")]
    Blank,
    #[error("must be digits only")]
    NotDigits,
    #[error("must be exactly {0} characters")]
    Length(i32),
    #[error("must be {0} to {1} digits")]
    Digits(usize, usize),
    #[error("fails the ABA routing-number checksum")]
    AbaChecksum,
    #[error("must be 4 letters, 0, then 6 letters or digits")]
    Ifsc,
    #[error("must be a BIC of 8 or 11 characters for a bank in {0}")]
    Bic(String),
    #[error("must be an IBAN of {0} (starting {0})")]
    IbanCountry(String),
    #[error("must be {length} characters for {country}")]
    IbanLength { length: usize, country: String },
    #[error("must be letters and digits with two check digits")]
    IbanShape,
    #[error("has wrong check digits")]
    IbanCheckDigits,
    #[error("bank code {0:?} is not a Nigerian bank")]
    UnknownNigerianBank(String),
}

fn check_field(country: &str, field: &Field, value: &str) -> Result<(), Broken> {
    match field.name {
        "account_name" if value.is_empty() => return Err(Broken::Blank),
        "account_name" => return Ok(()),
        _ => {}
    }
    if field.number && !digits(value) {
        return Err(Broken::NotDigits);
    }
    if let Some(length) = field.length
        && value.chars().count() != length as usize
    {
        return Err(Broken::Length(length));
    }
    match (field.name, country) {
        ("account_number", "IN") if !(9..=18).contains(&value.len()) => Err(Broken::Digits(9, 18)),
        ("account_number", "US") if !(4..=17).contains(&value.len()) => Err(Broken::Digits(4, 17)),
        ("routing_number", _) if !aba_checksum(value) => Err(Broken::AbaChecksum),
        ("ifsc", _) if !ifsc(value) => Err(Broken::Ifsc),
        ("iban", _) => check_iban(country, value),
        ("bic", _) if !bic(country, value) => Err(Broken::Bic(country.to_owned())),
        _ => Ok(()),
    }
}

/// The ABA checksum: 3, 7, 1 weights over the nine digits sum to a multiple of 10.
fn aba_checksum(value: &str) -> bool {
    let d: Vec<u32> = value.bytes().map(|b| u32::from(b - b'0')).collect();
    d.len() == 9 && (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8])).is_multiple_of(10)
}

fn ifsc(value: &str) -> bool {
    let b = value.as_bytes();
    b.len() == 11
        && b[..4].iter().all(u8::is_ascii_uppercase)
        && b[4] == b'0'
        && b[5..].iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

fn bic(country: &str, value: &str) -> bool {
    let b = value.as_bytes();
    (b.len() == 8 || b.len() == 11)
        && b[..4].iter().all(u8::is_ascii_uppercase)
        && &value[4..6] == country
        && b[6..].iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// ISO 13616: the country's length, and the number formed by moving the first four characters
/// to the end (letters as 10..35) is 1 modulo 97.
fn check_iban(country: &str, iban: &str) -> Result<(), Broken> {
    let length = EURO_COUNTRIES.iter().find(|(c, ..)| *c == country).map(|(.., l)| *l).unwrap_or(0);
    if !iban.starts_with(country) {
        return Err(Broken::IbanCountry(country.to_owned()));
    }
    if iban.len() != length {
        return Err(Broken::IbanLength { length, country: country.to_owned() });
    }
    if !iban.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()) || !digits(&iban[2..4]) {
        return Err(Broken::IbanShape);
    }
    if iban_remainder(iban) != 1 {
        return Err(Broken::IbanCheckDigits);
    }
    Ok(())
}

fn iban_remainder(iban: &str) -> u32 {
    let rearranged = iban[4..].bytes().chain(iban[..4].bytes());
    rearranged.fold(0u32, |acc, b| {
        if b.is_ascii_digit() {
            (acc * 10 + u32::from(b - b'0')) % 97
        } else {
            (acc * 100 + u32::from(b - b'A' + 10)) % 97
        }
    })
}

const NG_BANKS: &[(&str, &str)] = &[
    ("011", "First Bank of Nigeria"),
    ("033", "United Bank for Africa"),
    ("035", "Wema Bank"),
    ("044", "Access Bank"),
    ("050", "Ecobank Nigeria"),
    ("057", "Zenith Bank"),
    ("058", "Guaranty Trust Bank"),
    ("070", "Fidelity Bank"),
    ("214", "First City Monument Bank"),
    ("232", "Sterling Bank"),
];

const IN_BANKS: &[(&str, &str)] = &[
    ("HDFC", "HDFC Bank"),
    ("ICIC", "ICICI Bank"),
    ("SBIN", "State Bank of India"),
    ("UTIB", "Axis Bank"),
    ("KKBK", "Kotak Mahindra Bank"),
];

/// The bank's name, from its identifier. Nigerian bank codes must be known ones.
fn bank_name(country: &str, currency: &str, bank_id: &str) -> Result<String, Broken> {
    Ok(match currency {
        "NGN" => NG_BANKS
            .iter()
            .find(|(code, _)| *code == bank_id)
            .map(|(_, name)| (*name).to_owned())
            .ok_or_else(|| Broken::UnknownNigerianBank(bank_id.to_owned()))?,
        "INR" => IN_BANKS
            .iter()
            .find(|(prefix, _)| bank_id.starts_with(prefix))
            .map_or_else(|| format!("Sandbox Bank India ({})", &bank_id[..4]), |(_, name)| (*name).to_owned()),
        "GBP" => "Sandbox Bank UK".into(),
        "USD" => "Sandbox Bank US".into(),
        _ => format!("Sandbox Bank {} ({country})", &bank_id[..4]),
    })
}

/// The account holder's name as a sandbox bank resolves it: derived from the account, so the
/// same details always resolve to the same name.
fn holder_name(country: &str, bank_id: &str, account_number: &str) -> String {
    const FIRST: &[&str] =
        &["Adaeze", "Chinedu", "Ngozi", "Tunde", "Amara", "Oliver", "Amelia", "Harry", "Isla", "George"];
    const LAST: &[&str] =
        &["Okafor", "Adeyemi", "Eze", "Bello", "Nwosu", "Smith", "Jones", "Taylor", "Brown", "Wilson"];
    let hash = fnv1a(format!("{bank_id}/{account_number}").as_bytes());
    let name = format!("{} {}", FIRST[(hash % 10) as usize], LAST[((hash / 10) % 10) as usize]);
    if country == "NG" { name.to_uppercase() } else { name }
}

pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iban_check_digits() {
        assert_eq!(iban_remainder("DE89370400440532013000"), 1);
        assert_ne!(iban_remainder("DE89370400440532013001"), 1);
        assert!(check_iban("DE", "DE89370400440532013000").is_ok());
        assert!(check_iban("FR", "DE89370400440532013000").is_err());
    }

    #[test]
    fn aba() {
        assert!(aba_checksum("021000021"));
        assert!(!aba_checksum("021000022"));
    }
}
