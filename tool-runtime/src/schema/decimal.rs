//! `multipleOf` decided exactly on numbers as they are written in decimal.
//!
//! In binary floating point `0.07 / 0.01` is `7.000000000000001`, so a division refuses
//! most prices against a step of `0.01`. A JSON number is written in decimal, and a
//! parsed `f64` prints back as the shortest decimal that reads as it (`0.07`), so each
//! number is taken as `digits × 10^exponent` and the question becomes one about
//! integers, answered with remainders (no big numbers needed: `digits` fits in 64 bits).

use serde_json::Number;

/// A number's magnitude as `digits × 10^exponent`, `digits` without trailing zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decimal {
    digits: u128,
    exponent: i32,
}

impl Decimal {
    /// The magnitude of `number` (its sign does not matter to `multipleOf`); `None` for a
    /// float that is not finite, which JSON cannot carry anyway.
    fn of(number: &Number) -> Option<Decimal> {
        let (digits, exponent) = if let Some(unsigned) = number.as_u64() {
            (u128::from(unsigned), 0)
        } else if let Some(signed) = number.as_i64() {
            (u128::from(signed.unsigned_abs()), 0)
        } else {
            let float = number.as_f64()?;
            if !float.is_finite() {
                return None;
            }
            // Rust prints a float as the shortest decimal that reads back as it, at most
            // 17 significant digits: "7e-2", "1.999e1".
            let written = format!("{:e}", float.abs());
            let (mantissa, exponent) = written.split_once('e')?;
            let exponent: i32 = exponent.parse().ok()?;
            let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
            let digits: u128 = format!("{whole}{fraction}").parse().ok()?;
            (digits, exponent - i32::try_from(fraction.len()).ok()?)
        };
        Some(Decimal { digits, exponent }.normalized())
    }

    fn normalized(mut self) -> Decimal {
        if self.digits == 0 {
            return Decimal {
                digits: 0,
                exponent: 0,
            };
        }
        while self.digits.is_multiple_of(10) {
            self.digits /= 10;
            self.exponent += 1;
        }
        self
    }
}

/// Whether `number` is `step` times an integer, exactly as both are written in decimal.
/// A step of zero has no multiples (a schema with one is refused before it gets here).
pub(crate) fn is_multiple(number: &Number, step: &Number) -> bool {
    let (Some(number), Some(step)) = (Decimal::of(number), Decimal::of(step)) else {
        return false;
    };
    if step.digits == 0 {
        return false;
    }
    if number.digits == 0 {
        return true;
    }
    if number.exponent >= step.exponent {
        // number / step = (n × 10^k) / s: an integer when s divides n × 10^k.
        let k = u32::try_from(number.exponent - step.exponent).unwrap_or(u32::MAX);
        let modulus = step.digits;
        mul_mod(number.digits % modulus, pow_mod(10, k, modulus), modulus) == 0
    } else {
        // number / step = n / (s × 10^k): n has at most 20 digits, so past 10^38 no
        // divisor that large divides it.
        let k = u32::try_from(step.exponent - number.exponent).unwrap_or(u32::MAX);
        10u128
            .checked_pow(k)
            .and_then(|scale| step.digits.checked_mul(scale))
            .is_some_and(|divisor| number.digits.is_multiple_of(divisor))
    }
}

/// `a × b mod m` for `a, b < m ≤ 2^64`: the product fits in 128 bits.
fn mul_mod(a: u128, b: u128, m: u128) -> u128 {
    (a * b) % m
}

/// `base^exponent mod m`, by squaring.
fn pow_mod(base: u128, mut exponent: u32, m: u128) -> u128 {
    let mut result = 1 % m;
    let mut base = base % m;
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = mul_mod(result, base, m);
        }
        base = mul_mod(base, base, m);
        exponent >>= 1;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(text: &str) -> Number {
        serde_json::from_str(text).expect("a JSON number")
    }

    fn multiple(value: &str, step: &str) -> bool {
        is_multiple(&number(value), &number(step))
    }

    #[test]
    fn prices_are_multiples_of_a_cent() {
        for price in [
            "0.07",
            "19.99",
            "0.01",
            "1",
            "1000000.5",
            "-3.33",
            "0",
            "12.1",
        ] {
            assert!(multiple(price, "0.01"), "{price} is a multiple of 0.01");
        }
        for price in ["0.075", "19.999", "0.001", "1e-3"] {
            assert!(
                !multiple(price, "0.01"),
                "{price} is not a multiple of 0.01"
            );
        }
    }

    #[test]
    fn steps_that_binary_cannot_hold_are_exact() {
        assert!(multiple("0.3", "0.1"));
        assert!(multiple("4.5", "1.5"));
        assert!(!multiple("35", "1.5"));
        assert!(multiple("0.0075", "0.0001"));
        assert!(!multiple("0.00751", "0.0001"));
        assert!(multiple("7.5", "2.5"));
        assert!(!multiple("7.6", "2.5"));
    }

    #[test]
    fn integers_and_large_magnitudes() {
        assert!(multiple("12391239123", "1e-8"));
        assert!(multiple("1e308", "0.5"));
        assert!(!multiple("1e308", "0.123456789"));
        assert!(multiple("9223372036854775807", "1"));
        assert!(!multiple("9223372036854775807", "2"));
        assert!(multiple("-9223372036854775808", "2"));
        assert!(multiple("18446744073709551615", "5"));
        assert!(!multiple("1", "1e300"));
        assert!(multiple("1e300", "1e299"));
        assert!(!multiple("1e-300", "3"));
    }

    #[test]
    fn numbers_read_as_their_shortest_decimal() {
        assert_eq!(
            Decimal::of(&number("0.07")),
            Some(Decimal {
                digits: 7,
                exponent: -2
            })
        );
        assert_eq!(
            Decimal::of(&number("1500")),
            Some(Decimal {
                digits: 15,
                exponent: 2
            })
        );
        assert_eq!(
            Decimal::of(&number("-0.0")),
            Some(Decimal {
                digits: 0,
                exponent: 0
            })
        );
    }
}
