//! How the two halves of a large document's validation run: on a second
//! thread by default, or on the caller's thread pool.

/// Runs two pieces of work to completion, at once where it can.
///
/// [`super::validate_with`] hands it the two halves of a large document
/// (objects and stack-level actions; tools, skills and agents). A caller
/// with a thread pool runs them as two of its tasks, so that validation
/// beside other work never has more threads running than the machine has
/// cores: with more, the scheduler slices a core between them, and one
/// core can sit idle while two threads wait on the other.
pub trait Join {
    /// Runs `a` and `b`, each once, and returns when both are done. A
    /// panic in either reaches the caller.
    fn join(&self, a: &mut (dyn FnMut() + Send), b: &mut (dyn FnMut() + Send));
}

/// [`Join`] on a scoped second thread, or in order on the caller's thread
/// when no thread can be started: what [`super::validate`] uses.
#[derive(Debug, Clone, Copy, Default)]
pub struct Threads;

impl Join for Threads {
    fn join(&self, a: &mut (dyn FnMut() + Send), b: &mut (dyn FnMut() + Send)) {
        let started = std::thread::scope(|scope| {
            let Ok(first) = std::thread::Builder::new().spawn_scoped(scope, &mut *a) else {
                return false;
            };
            b();
            if let Err(panic) = first.join() {
                std::panic::resume_unwind(panic);
            }
            true
        });
        if !started {
            a();
            b();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_run_both_once() {
        let (mut x, mut y) = (0, 0);
        Threads.join(&mut || x += 1, &mut || y += 1);
        assert_eq!((x, y), (1, 1));
    }

    #[test]
    #[should_panic(expected = "first half")]
    fn a_panic_reaches_the_caller() {
        Threads.join(&mut || panic!("first half"), &mut || {});
    }
}
