//! Spreading a batch's rows over a thread pool, shared by the CPU backends: whole pieces
//! of `unit` rows go to each thread, the calling thread takes the first share, and the
//! first error any share hits is returned.

use std::sync::{Mutex, PoisonError};

use super::io::{output_lens, split_outputs};
use super::{BackendError, BatchInput, IoShape};

/// Runs `run` on shares of `input`'s rows and of `out` (each output's rows, in the
/// contract's order) on up to `threads` threads of `pool` (the caller counting as one).
pub(crate) fn spread<F>(
    pool: &rayon::ThreadPool,
    threads: usize,
    unit: usize,
    shape: &IoShape,
    input: &BatchInput<'_>,
    out: [&mut [f32]; 5],
    run: F,
) -> Result<(), BackendError>
where
    F: Fn(&BatchInput<'_>, [&mut [f32]; 5]) -> Result<(), BackendError> + Sync,
{
    let unit = unit.max(1);
    let pieces = input.rows.div_ceil(unit);
    let workers = threads.clamp(1, pieces.max(1));
    let lens = output_lens(shape);
    let first_error: Mutex<Option<BackendError>> = Mutex::new(None);
    let record = |r: Result<(), BackendError>| {
        if let Err(e) = r {
            first_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert(e);
        }
    };
    pool.in_place_scope(|scope| {
        let mut rest = out;
        let mut start = 0;
        let mut own = None;
        for w in 0..workers {
            let share = pieces / workers + usize::from(w < pieces % workers);
            let rows = (share * unit).min(input.rows - start);
            let (head, tail) = split_outputs(rest, &lens, rows);
            rest = tail;
            let piece = input.slice(shape, start, rows);
            start += rows;
            if w == 0 {
                own = Some((piece, head));
            } else {
                let (record, run) = (&record, &run);
                scope.spawn(move |_| record(run(&piece, head)));
            }
        }
        if let Some((piece, head)) = own {
            record(run(&piece, head));
        }
    });
    match first_error
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
