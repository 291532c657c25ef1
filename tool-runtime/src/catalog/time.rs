//! How the catalog speaks of time: durations as people write them, and rates
//! (`#[tool(rate = "10/s")]`).

use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::time::Duration;

/// How often something may happen: `count` times per `period`, as `"10/s"`, `"100/min"`,
/// `"5/h"` or `"3/10s"` say it. Up to `count` may come at once; after that they are let
/// through evenly, one every `period / count`.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::ops::Rate;
///
/// let rate: Rate = "100/min".parse().unwrap();
/// assert_eq!((rate.count(), rate.period()), (100, Duration::from_secs(60)));
/// assert_eq!(rate.to_string(), "100 per minute");
/// assert_eq!("3/10s".parse::<Rate>().unwrap().to_string(), "3 per 10s");
/// assert!("ten/s".parse::<Rate>().unwrap_err().contains("ten/s"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    count: NonZeroU32,
    period: Duration,
}

impl Rate {
    /// `count` per `period`; `None` when either is zero.
    pub fn new(count: u32, period: Duration) -> Option<Rate> {
        let count = NonZeroU32::new(count)?;
        (!period.is_zero()).then_some(Rate { count, period })
    }

    /// `count` per second.
    pub fn per_second(count: NonZeroU32) -> Rate {
        Rate {
            count,
            period: Duration::from_secs(1),
        }
    }

    #[doc(hidden)]
    /// What `#[tool(rate = "...")]` writes, checked by the macro.
    pub const fn __checked(count: u32, period_ms: u64) -> Rate {
        match NonZeroU32::new(count) {
            Some(count) => Rate {
                count,
                period: Duration::from_millis(period_ms),
            },
            None => panic!("a rate counts at least one"),
        }
    }

    /// How many in a period.
    pub fn count(&self) -> u32 {
        self.count.get()
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }
}

impl FromStr for Rate {
    type Err = String;

    /// Reads a rate as `#[tool(rate = "...")]` does (the same rule, from `tool-rules`).
    fn from_str(text: &str) -> Result<Rate, String> {
        let (count, period_ms) = tool_rules::parse_rate(text)?;
        Ok(Rate::__checked(count, period_ms))
    }
}

impl Rate {
    /// The rate counting `things` (a plural ending in `s`): "10 calls per second", "1 call
    /// per minute".
    pub(crate) fn of(&self, things: &str) -> String {
        let things = match self.count.get() {
            1 => things.strip_suffix('s').unwrap_or(things),
            _ => things,
        };
        format!("{} {things} per {}", self.count, self.shown_period())
    }

    fn shown_period(&self) -> String {
        match self.period.as_millis() {
            1_000 => "second".to_owned(),
            60_000 => "minute".to_owned(),
            3_600_000 => "hour".to_owned(),
            _ => show_duration(self.period),
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} per {}", self.count, self.shown_period())
    }
}

/// `5s`, `1.5s`, `250ms`: how people write short durations.
pub(crate) fn show_duration(duration: std::time::Duration) -> String {
    let millis = duration.as_millis();
    if millis >= 3_600_000 && millis.is_multiple_of(3_600_000) {
        format!("{} h", millis / 3_600_000)
    } else if millis >= 60_000 && millis.is_multiple_of(60_000) {
        format!("{} min", millis / 60_000)
    } else if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else if millis > 1000 {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        format!("{millis}ms")
    }
}
