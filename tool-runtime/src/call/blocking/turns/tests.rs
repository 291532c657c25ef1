//! The runtime in turns, driven as `serve` drives it: quick tools run between turns, slow
//! and stuck ones hand the runtime on, time limits fire.

use super::*;
use crate::call::output::Produced;
use serde_json::{json, Value};
use std::sync::mpsc;

/// Work that answers what `f` gives.
fn work(f: impl FnOnce() -> Value + Send + 'static) -> BlockingWork {
    Box::new(move || Ok(Produced::Json(f())))
}

/// The value a deferred run answered.
async fn value(answered: Answered) -> Value {
    match answered.await {
        Some(Ok(Ok(Produced::Json(value)))) => value,
        _ => panic!("the run did not answer a value"),
    }
}

fn thread_name() -> Value {
    json!(format!("{:?}", std::thread::current().id()))
}

/// Work that blocks until `released` says so (or 20 s pass, which fails the test that
/// expected otherwise), then answers whether it was released and its thread.
fn held_until(released: mpsc::Receiver<()>) -> BlockingWork {
    work(move || {
        let outcome = released.recv_timeout(Duration::from_secs(20));
        json!([outcome.is_ok(), thread_name()])
    })
}

fn current_thread() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Limits for the tests not about slowness: no run counts as slow or stuck, however long
/// a busy machine makes it; the turn budget is the server's.
const PATIENT: Limits = Limits {
    too_slow: Duration::from_secs(60),
    stuck_after: Duration::from_secs(60),
    turn_budget: TURN_BUDGET,
};

fn quick(tool: &str) -> Arc<Pace> {
    Arc::new(Pace::proven_quick(tool))
}

fn deferred(work: BlockingWork, pace: &Arc<Pace>) -> Answered {
    match defer(work, pace) {
        Ok(answered) => answered,
        Err(_) => panic!("a task of a driven runtime defers its work"),
    }
}

#[test]
fn work_runs_on_the_thread_that_drives_the_runtime() {
    let (ran, driver) = drive_with(
        current_thread(),
        async {
            let pace = quick("add");
            let mut ran = Vec::new();
            for n in 0..3 {
                let runs = work(move || {
                    let in_runtime = tokio::runtime::Handle::try_current().is_ok();
                    json!([n * 2, in_runtime, thread_name()])
                });
                ran.push(value(deferred(runs, &pace)).await);
            }
            (ran, thread_name())
        },
        Duration::from_secs(1),
        PATIENT,
    );
    assert_ne!(driver, thread_name(), "a thread of its own drives");
    assert_eq!(
        ran,
        vec![
            json!([0, true, driver]),
            json!([2, true, driver]),
            json!([4, true, driver])
        ],
        "each run was on the driving thread, in the runtime's context, and answered its call"
    );
}

#[test]
fn work_stuck_between_turns_hands_the_runtime_to_another_thread() {
    let (release, released) = mpsc::channel::<()>();
    let pace = quick("stuck");
    let tool = Arc::clone(&pace);
    let (ran, after) = drive(
        current_thread(),
        async move {
            // Blocks until the runtime has moved on without it.
            let answered = deferred(held_until(released), &tool);
            // A timer fires only if another thread drives the runtime meanwhile.
            tokio::time::sleep(Duration::from_millis(10)).await;
            let after = thread_name();
            release.send(()).expect("the work waits");
            (value(answered).await, after)
        },
        Duration::from_secs(1),
    );
    assert_eq!(ran[0], true, "the runtime stood still behind the work");
    assert_ne!(ran[1], after, "another thread drove past the stuck work");
    assert!(!pace.is_quick(), "the stuck tool goes back to the pool");
}

#[test]
fn a_call_answered_before_work_got_stuck_is_not_held_behind_it() {
    let (release, released) = mpsc::channel::<()>();
    let stuck_behind = drive(
        current_thread(),
        async move {
            // Both in one turn: the quick one runs first, then the stuck one.
            let first = deferred(work(|| json!(1)), &quick("add"));
            let second = deferred(held_until(released), &quick("stuck"));
            // The deadline is looked at first: a call woken only by it does not count.
            let mut deadline = std::pin::pin!(tokio::time::sleep(Duration::from_secs(10)));
            let mut first = std::pin::pin!(value(first));
            let first = poll_fn(|cx| {
                if deadline.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                first.as_mut().poll(cx).map(Some)
            })
            .await;
            release.send(()).expect("the stuck work waits");
            (first, value(second).await[0].clone())
        },
        Duration::from_secs(1),
    );
    assert_eq!(
        stuck_behind,
        (Some(json!(1)), json!(true)),
        "the first call was answered while the second run was stuck"
    );
}

#[test]
fn the_waiting_work_of_a_tool_that_got_stuck_goes_to_the_pool() {
    let (release, released) = mpsc::channel::<()>();
    let pace = quick("stuck");
    let tool = Arc::clone(&pace);
    let (next_ran_on, stuck) = drive(
        current_thread(),
        async move {
            let stuck = deferred(held_until(released), &tool);
            let next = deferred(work(thread_name), &tool);
            let next_ran_on = value(next).await;
            release.send(()).expect("the stuck work waits");
            (next_ran_on, value(stuck).await)
        },
        Duration::from_secs(1),
    );
    assert_eq!(
        stuck[0], true,
        "the next run ended while the first was stuck"
    );
    assert_ne!(next_ran_on, stuck[1], "not behind the stuck run");
    assert!(!pace.is_quick());
}

#[test]
fn work_gives_the_runtime_a_turn_once_it_has_run_for_a_while() {
    // Each run lasts 400 µs at least, so the budget runs out after three at most: a
    // busy machine only makes them longer.
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    drive_with(
        current_thread(),
        async move {
            let woken = Arc::new(tokio::sync::Notify::new());
            let waiting = Arc::clone(&woken);
            let record = Arc::clone(&seen);
            let task = tokio::spawn(async move {
                waiting.notified().await;
                lock(&record).push("task".to_owned());
            });
            let pace = quick("add");
            let mut answers = Vec::new();
            for n in 0..10 {
                let record = Arc::clone(&seen);
                let woken = Arc::clone(&woken);
                let runs = work(move || {
                    if n == 0 {
                        // Ready from now on: it runs when the runtime gets a turn.
                        woken.notify_one();
                    }
                    std::thread::sleep(Duration::from_micros(400));
                    lock(&record).push(format!("run {n}"));
                    Value::Null
                });
                answers.push(deferred(runs, &pace));
            }
            for answered in answers {
                value(answered).await;
            }
            task.await.expect("the task ran");
        },
        Duration::from_secs(1),
        PATIENT,
    );
    let events = lock(&events).clone();
    let task = events.iter().position(|event| event == "task");
    let last_run = events.iter().position(|event| event == "run 9");
    assert!(
        task < last_run,
        "4 ms of runs went by without a turn of the runtime: {events:?}"
    );
}

#[test]
fn the_end_does_not_wait_for_stuck_work() {
    let (release, released) = mpsc::channel::<()>();
    let (done, finished) = mpsc::channel();
    drive(
        current_thread(),
        async move {
            let runs = work(move || {
                let _ = released.recv_timeout(Duration::from_secs(20));
                let _ = done.send("finished");
                Value::Null
            });
            drop(deferred(runs, &quick("stuck")));
            tokio::time::sleep(Duration::from_millis(10)).await;
        },
        Duration::from_secs(1),
    );
    // Here while the work still waits for its release.
    release.send(()).expect("the work still runs");
    assert_eq!(
        finished.recv_timeout(Duration::from_secs(20)),
        Ok("finished")
    );
}

#[test]
fn outside_a_driven_runtime_work_is_given_back() {
    let given_back = || defer(work(|| Value::Null), &quick("add")).is_err();
    let on_the_pool = drive(
        current_thread(),
        async move {
            tokio::task::spawn_blocking(given_back)
                .await
                .expect("no panic")
        },
        Duration::from_secs(1),
    );
    assert!(on_the_pool, "a blocking-pool thread drives nothing");
    let multi_thread = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .expect("a runtime");
    assert!(
        drive(
            multi_thread,
            async move { given_back() },
            Duration::from_secs(1)
        ),
        "a multi-thread runtime is not driven in turns"
    );
    assert!(given_back(), "no runtime");
}

#[test]
fn a_panic_of_the_driven_future_is_resumed() {
    let caught = std::panic::catch_unwind(|| {
        drive(
            current_thread(),
            async { panic!("the future failed") },
            Duration::from_secs(1),
        )
    });
    let payload = caught.expect_err("the panic reaches the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"the future failed"));
}
