//! What `call` shows while a call runs: its progress reports, as a bar on a terminal
//! (`indicatif`) or as one line each otherwise (a log, a pipe), and the status of the task
//! a mounted server runs it as (the bar's message, or a line each time it changes), or
//! nothing with `--quiet`; all on stderr, so stdout keeps only the result.

use crate::call::scope::Notifier;
use serde_json::Value;
use std::io::IsTerminal;
use std::sync::Mutex;

/// How progress is shown.
pub(super) enum Shown {
    /// A bar that fills as the reports come (a terminal).
    Bar(indicatif::ProgressBar),
    /// One line per report.
    Lines(Mutex<std::io::Stderr>),
    /// Nothing.
    Quiet,
}

impl Shown {
    /// A bar when stderr is a terminal, lines otherwise; nothing when `quiet`.
    pub(super) fn for_stderr(quiet: bool) -> Shown {
        if quiet {
            return Shown::Quiet;
        }
        if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr(),
            );
            let style = indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed}] {wide_bar} {pos}/{len} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
            bar.set_style(style);
            return Shown::Bar(bar);
        }
        Shown::Lines(Mutex::new(std::io::stderr()))
    }

    /// Takes the bar off the terminal once the call ended.
    pub(super) fn finish(&self) {
        if let Shown::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// One progress report in words: `progress 3/10: reading files`.
pub(super) fn line(params: &Value) -> String {
    let number = |key: &str| params[key].as_f64().map(trim);
    let mut text = match (number("progress"), number("total")) {
        (Some(done), Some(total)) => format!("progress {done}/{total}"),
        (Some(done), None) => format!("progress {done}"),
        _ => "progress".to_owned(),
    };
    if let Some(message) = params["message"].as_str() {
        text.push_str(": ");
        text.push_str(message);
    }
    text
}

/// A number as a person writes it: `3`, not `3.0`.
fn trim(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{}", number as i64)
    } else {
        number.to_string()
    }
}

/// A task's status as its mount tells it (a log message named "task"), if `params` is one.
#[cfg(feature = "client")]
fn task_status(params: &Value) -> Option<&str> {
    (params["logger"] == crate::mount::TASK_LOGGER)
        .then(|| params["data"].as_str())
        .flatten()
}

/// Without mounts, no call runs as another server's task.
#[cfg(not(feature = "client"))]
fn task_status(_: &Value) -> Option<&str> {
    None
}

impl Notifier for Shown {
    fn notify(&self, method: &str, params: Value) {
        if method == "notifications/message" {
            if let Some(status) = task_status(&params) {
                self.status(status);
            }
            return;
        }
        if method != "notifications/progress" {
            return;
        }
        match self {
            Shown::Quiet => {}
            Shown::Lines(stderr) => write_line(stderr, &line(&params)),
            Shown::Bar(bar) => {
                // The bar counts whole steps; fractional progress is scaled to thousandths.
                let (done, total) = (params["progress"].as_f64(), params["total"].as_f64());
                let scale = if [done, total].iter().flatten().any(|n| n.fract() != 0.0) {
                    1000.0
                } else {
                    1.0
                };
                if let Some(total) = total {
                    bar.set_length((total * scale) as u64);
                }
                if let Some(done) = done {
                    bar.set_position((done * scale) as u64);
                }
                if let Some(message) = params["message"].as_str() {
                    bar.set_message(message.to_owned());
                }
            }
        }
    }
}

impl Shown {
    /// Shows a task's status: the bar's message, or a line.
    fn status(&self, status: &str) {
        match self {
            Shown::Quiet => {}
            Shown::Lines(stderr) => write_line(stderr, status),
            Shown::Bar(bar) => bar.set_message(status.to_owned()),
        }
    }
}

/// One line on stderr, whole (reports from several threads never interleave).
fn write_line(stderr: &Mutex<std::io::Stderr>, text: &str) {
    use std::io::Write;
    let mut stderr = stderr
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let _ = writeln!(stderr, "{text}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_report_reads_as_a_person_writes_it() {
        assert_eq!(line(&json!({"progress": 3, "total": 10})), "progress 3/10");
        assert_eq!(
            line(&json!({"progress": 0.5, "message": "halfway"})),
            "progress 0.5: halfway"
        );
        assert_eq!(
            line(&json!({"progress": 2.0, "total": 4.0})),
            "progress 2/4"
        );
    }
}
