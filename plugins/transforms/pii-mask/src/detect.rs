//! Detectors that find personal data inside any string: e-mail addresses, phone numbers,
//! credit-card numbers (Luhn-checked) and US social security numbers.

use regex::Regex;
use serde::Deserialize;

/// A kind of personal data to look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Detector {
    /// `name@example.com`
    Email,
    /// `+1 (555) 123-4567`, `555.123.4567`, `+44 20 7946 0958`
    Phone,
    /// 13–19 digits, optionally grouped by spaces or dashes, passing the Luhn check.
    CreditCard,
    /// `123-45-6789`, excluding numbers never issued (area 000, 666, 9xx; group 00; serial 0000).
    Ssn,
}

/// Compiled detectors, applied in a fixed order: card numbers first (the longest digit
/// runs), then SSNs, phones and e-mails, so a card number is never half-taken for a phone.
pub struct Detectors {
    card: Option<Regex>,
    ssn: Option<Regex>,
    phone: Option<Regex>,
    email: Option<Regex>,
}

impl Detectors {
    pub fn new(enabled: &[Detector]) -> Self {
        let on = |d: Detector, pattern: &str| {
            enabled.contains(&d).then(|| Regex::new(pattern).expect("detector patterns are fixed and valid"))
        };
        Self {
            card: on(Detector::CreditCard, r"\b\d(?:[ -]?\d){12,18}\b"),
            ssn: on(Detector::Ssn, r"\b\d{3}-\d{2}-\d{4}\b"),
            phone: on(Detector::Phone, r"(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)|\b\d{2,4})[ .-]?\d{3,4}[ .-]?\d{4}\b"),
            email: on(Detector::Email, r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.card.is_none() && self.ssn.is_none() && self.phone.is_none() && self.email.is_none()
    }

    /// Replaces every detected item in `text` with `mask(item)`; `None` if nothing was found.
    pub fn apply(&self, text: &str, mask: &dyn Fn(&str) -> String) -> Option<String> {
        let mut current: Option<String> = None;
        // Matches only, no capture groups: finding where a match starts and ends is all the
        // DFA needs, while asking for groups runs a slower engine over every match.
        let mut run = |re: &Option<Regex>, may_match: &dyn Fn(&str) -> bool, accept: fn(&str) -> bool| {
            let Some(re) = re else { return };
            let input = current.as_deref().unwrap_or(text);
            // Most strings in a record (names, cities, IDs) cannot hold a match: a count of
            // digits or a look for `@` says so for less than a search costs.
            if !may_match(input) {
                return;
            }
            let (mut replaced, mut at) = (String::new(), 0);
            for found in re.find_iter(input).filter(|m| accept(m.as_str())) {
                replaced.push_str(&input[at..found.start()]);
                replaced.push_str(&mask(found.as_str()));
                at = found.end();
            }
            if at > 0 {
                replaced.push_str(&input[at..]);
                current = Some(replaced);
            }
        };
        // The fewest digits each pattern matches: a card 13, an SSN 9, a phone 9 (2 + 3 + 4).
        run(&self.card, &|t| has_digits(t, 13), luhn);
        run(&self.ssn, &|t| has_digits(t, 9), valid_ssn);
        run(&self.phone, &|t| has_digits(t, 9), |_| true);
        run(&self.email, &|t| t.contains('@'), |_| true);
        current
    }
}

/// Whether `text` has at least `n` digits. Text that is not all ASCII may: the patterns' `\d`
/// also matches other scripts' digits, so it is always searched.
fn has_digits(text: &str, n: usize) -> bool {
    !text.is_ascii() || text.bytes().filter(u8::is_ascii_digit).count() >= n
}

/// The Luhn checksum over the digits of `text`.
fn luhn(text: &str) -> bool {
    let digits: Vec<u32> = text.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| if i % 2 == 1 { if d * 2 > 9 { d * 2 - 9 } else { d * 2 } } else { d })
        .sum();
    sum.is_multiple_of(10)
}

/// `text` is what the SSN pattern matched: `ddd-dd-dddd`, so its parts are between the dashes.
fn valid_ssn(text: &str) -> bool {
    let mut parts = text.split('-');
    let (area, group, serial) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
    area != "000" && area != "666" && !area.starts_with('9') && group != "00" && serial != "0000"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(enabled: &[Detector], text: &str) -> String {
        Detectors::new(enabled).apply(text, &|_| "<X>".to_owned()).unwrap_or_else(|| text.to_owned())
    }

    const ALL: &[Detector] = &[Detector::Email, Detector::Phone, Detector::CreditCard, Detector::Ssn];

    #[test]
    fn detects_each_kind_inside_free_text() {
        let cases = [
            ("mail me at jane.doe+x@mail.example.org now", "mail me at <X> now"),
            ("call +1 (555) 123-4567 today", "call <X> today"),
            ("call 555.123.4567", "call <X>"),
            ("card 4111 1111 1111 1111 exp", "card <X> exp"),
            ("card 4111-1111-1111-1111", "card <X>"),
            ("ssn 123-45-6789.", "ssn <X>."),
        ];
        for (input, want) in cases {
            assert_eq!(redact(ALL, input), want, "{input}");
        }
    }

    #[test]
    fn leaves_look_alikes_alone() {
        // Fails Luhn, so not a card (a phone detector is off here).
        assert_eq!(redact(&[Detector::CreditCard], "order 4111111111111112"), "order 4111111111111112");
        // Never-issued SSN areas.
        assert_eq!(redact(&[Detector::Ssn], "id 000-12-3456 and 666-12-3456"), "id 000-12-3456 and 666-12-3456");
        assert_eq!(redact(ALL, "version 1.2.3, 42 items"), "version 1.2.3, 42 items");
        assert!(Detectors::new(ALL).apply("nothing here", &|_| String::new()).is_none());
    }

    #[test]
    fn the_digit_count_never_skips_a_string_a_pattern_matches() {
        // Each pattern at its fewest digits, and digits of another script (`\d` is Unicode).
        let cases: [(&[Detector], &str); 5] = [
            (&[Detector::CreditCard], "4222222222222"),
            (&[Detector::Ssn], "123-45-6789"),
            (&[Detector::Phone], "12 345 6789"),
            (&[Detector::Phone], "(12)3456789"),
            (&[Detector::Ssn], "١٢٣-٤٥-٦٧٨٩"),
        ];
        for (enabled, text) in cases {
            assert_eq!(redact(enabled, text), "<X>", "{text}");
        }
        assert!(!has_digits("12 345 678", 9) && has_digits("é", 9));
    }

    #[test]
    fn luhn_accepts_known_test_numbers() {
        assert!(luhn("4111111111111111"));
        assert!(luhn("5500 0000 0000 0004"));
        assert!(luhn("378282246310005"));
        assert!(!luhn("4111111111111121"));
        assert!(!luhn("1234"));
    }
}
