//! The confirmations this gateway asked for with `input_required`
//! (2026-07-28), so that only those are decided by a retried call.
//!
//! A retry carries the pending action's id as `requestState` and the
//! user's answer in `inputResponses`, both written by the client. Without
//! this record any client could attach an "accept" to an action that was
//! only queued for a person to approve, and approve its own proposal.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many unanswered questions are remembered at most; past it, the
/// oldest is forgotten (its retry is refused, the action stays queued for
/// a person, and a new call asks afresh).
const MOST: usize = 10_000;

/// How long a question stays answerable.
const TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// Pending action ids this gateway asked about, with who was asked.
#[derive(Debug, Default)]
pub(crate) struct Asked {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    questions: HashMap<String, Question>,
    /// The order questions were asked in (`Instant`s can tie).
    next: u64,
}

#[derive(Debug)]
struct Question {
    actor: String,
    at: Instant,
    order: u64,
}

impl Asked {
    /// Notes that `actor` was asked to confirm pending action `id`.
    pub(crate) fn ask(&self, id: &str, actor: &str) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let Inner { questions, next } = &mut *inner;
        if questions.len() >= MOST {
            questions.retain(|_, q| q.at.elapsed() < TTL);
        }
        if questions.len() >= MOST
            && let Some(oldest) = questions
                .iter()
                .min_by_key(|(_, q)| q.order)
                .map(|(id, _)| id.clone())
        {
            questions.remove(&oldest);
        }
        *next += 1;
        questions.insert(
            id.to_owned(),
            Question {
                actor: actor.to_owned(),
                at: Instant::now(),
                order: *next,
            },
        );
    }

    /// Whether `actor` was asked about `id` (and not too long ago).
    pub(crate) fn was_asked(&self, id: &str, actor: &str) -> bool {
        self.inner.lock().is_ok_and(|inner| {
            inner
                .questions
                .get(id)
                .is_some_and(|q| q.actor == actor && q.at.elapsed() < TTL)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_actor_asked_about_an_id_may_answer_it() {
        let asked = Asked::default();
        assert!(!asked.was_asked("pa_1", "osk:a"));
        asked.ask("pa_1", "osk:a");
        assert!(asked.was_asked("pa_1", "osk:a"));
        assert!(!asked.was_asked("pa_1", "osk:b"));
        assert!(!asked.was_asked("pa_2", "osk:a"));
    }

    #[test]
    fn past_the_bound_the_oldest_question_is_forgotten() {
        let asked = Asked::default();
        for i in 0..MOST {
            asked.ask(&format!("pa_{i}"), "osk:a");
        }
        asked.ask("pa_new", "osk:a");
        assert!(asked.was_asked("pa_new", "osk:a"));
        assert!(!asked.was_asked("pa_0", "osk:a"));
        assert!(asked.was_asked("pa_1", "osk:a"));
    }
}
