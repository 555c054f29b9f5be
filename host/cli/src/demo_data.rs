//! Realistic-looking customer records full of personal data, for the demo.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

const FIRST: &[&str] = &["Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Margaret", "Linus", "Frances", "Dennis"];
const LAST: &[&str] = &["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Thompson", "Hamilton", "Torvalds", "Allen", "Ritchie"];
const CITIES: &[&str] = &["Lisbon", "Austin", "Leeds", "Osaka", "Denver", "Porto", "Tampere", "Quebec"];
const STREETS: &[&str] = &["Elm Street", "Harbour Road", "Mill Lane", "Station Avenue", "Kings Way"];

/// Makes customer records; deterministic for a given seed.
pub struct Customers {
    rng: SmallRng,
    next_id: u64,
}

impl Customers {
    pub fn new(seed: u64) -> Self {
        Self { rng: SmallRng::seed_from_u64(seed), next_id: 1 }
    }

    /// The next customer: `(key, JSON value)`.
    pub fn next_record(&mut self) -> (String, Value) {
        let id = format!("c-{:06}", self.next_id);
        self.next_id += 1;
        let r = &mut self.rng;
        let first = FIRST[r.random_range(0..FIRST.len())];
        let last = LAST[r.random_range(0..LAST.len())];
        let email = format!("{}.{}@example.com", first.to_lowercase(), last.to_lowercase());
        let phone = format!("+1 555-{:03}-{:04}", r.random_range(100..999), r.random_range(0..10_000));
        let ssn = format!("{:03}-{:02}-{:04}", r.random_range(100..665), r.random_range(1..99), r.random_range(1..9999));
        let card = luhn_card(r);
        let value = json!({
            "id": id,
            "name": format!("{first} {last}"),
            "email": email,
            "phone": phone,
            "ssn": ssn,
            "card": { "number": card, "expiry": format!("{:02}/{}", r.random_range(1..13), r.random_range(27..32)) },
            "address": {
                "street": format!("{} {}", r.random_range(1..200), STREETS[r.random_range(0..STREETS.len())]),
                "city": CITIES[r.random_range(0..CITIES.len())],
            },
            "notes": format!("Prefers calls at {phone}; backup e-mail {}{}@mail.test", first.to_lowercase(), r.random_range(1..99)),
            "lifetime_value": r.random_range(0..50_000),
        });
        (id, value)
    }
}

/// A 16-digit Visa-style number that passes the Luhn check.
fn luhn_card(r: &mut SmallRng) -> String {
    let mut digits: Vec<u32> = vec![4];
    while digits.len() < 15 {
        digits.push(r.random_range(0..10));
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| if i % 2 == 0 { let x = d * 2; if x > 9 { x - 9 } else { x } } else { d })
        .sum();
    digits.push((10 - sum % 10) % 10);
    digits.iter().map(|d| char::from_digit(*d, 10).expect("digit")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_pass_luhn_and_records_are_deterministic() {
        let mut a = Customers::new(7);
        let mut b = Customers::new(7);
        for _ in 0..50 {
            let (ka, va) = a.next_record();
            let (kb, vb) = b.next_record();
            assert_eq!((ka, &va), (kb, &vb));
            let card: Vec<u32> = va["card"]["number"].as_str().unwrap().chars().map(|c| c.to_digit(10).unwrap()).collect();
            let sum: u32 = card.iter().rev().enumerate().map(|(i, &d)| if i % 2 == 1 { let x = d * 2; if x > 9 { x - 9 } else { x } } else { d }).sum();
            assert_eq!(sum % 10, 0);
        }
    }
}
