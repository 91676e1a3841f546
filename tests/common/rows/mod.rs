//! Every command page's table of situations, as tests: one file per page, each with the page's
//! path and its rows (see `table.rs`). Each row's situation is the page's first column,
//! verbatim, and its cases are what the row says, run on a server; `tests/tables.rs` holds each
//! page and its rows together, and runs the rows on every server.

mod cl_throttle;
mod delex;
mod delifeq;
mod digest;
mod goblin_cad;
mod goblin_fwindow;
mod goblin_gcra;
mod goblin_increx;
mod goblin_lock;
mod goblin_mgcra;
mod goblin_rwlock;
mod goblin_swindow;
mod goblin_swstats;
mod goblin_zwindow;
mod goblin_zwstats;
mod increx;

pub use cl_throttle::*;
pub use delex::*;
pub use delifeq::*;
pub use digest::*;
pub use goblin_cad::*;
pub use goblin_fwindow::*;
pub use goblin_gcra::*;
pub use goblin_increx::*;
pub use goblin_lock::*;
pub use goblin_mgcra::*;
pub use goblin_rwlock::*;
pub use goblin_swindow::*;
pub use goblin_swstats::*;
pub use goblin_zwindow::*;
pub use goblin_zwstats::*;
pub use increx::*;

use super::table::Row;

/// Every command page, with its rows.
pub const PAGES: &[(&str, &[Row])] = &[
    (GOBLIN_INCREX_PAGE, GOBLIN_INCREX_ROWS),
    (GOBLIN_ZWINDOW_PAGE, GOBLIN_ZWINDOW_ROWS),
    (GOBLIN_CAD_PAGE, GOBLIN_CAD_ROWS),
    (GOBLIN_GCRA_PAGE, GOBLIN_GCRA_ROWS),
    (GOBLIN_MGCRA_PAGE, GOBLIN_MGCRA_ROWS),
    (GOBLIN_ZWSTATS_PAGE, GOBLIN_ZWSTATS_ROWS),
    (GOBLIN_SWINDOW_PAGE, GOBLIN_SWINDOW_ROWS),
    (GOBLIN_SWSTATS_PAGE, GOBLIN_SWSTATS_ROWS),
    (GOBLIN_LOCK_PAGE, GOBLIN_LOCK_ROWS),
    (GOBLIN_BLOCK_PAGE, GOBLIN_BLOCK_ROWS),
    (GOBLIN_EXTEND_PAGE, GOBLIN_EXTEND_ROWS),
    (GOBLIN_BZWINDOW_PAGE, GOBLIN_BZWINDOW_ROWS),
    (GOBLIN_FWINDOW_PAGE, GOBLIN_FWINDOW_ROWS),
    (GOBLIN_FWSTATS_PAGE, GOBLIN_FWSTATS_ROWS),
    (GOBLIN_MFWINDOW_PAGE, GOBLIN_MFWINDOW_ROWS),
    (GOBLIN_RLOCK_PAGE, GOBLIN_RLOCK_ROWS),
    (GOBLIN_WLOCK_PAGE, GOBLIN_WLOCK_ROWS),
    (GOBLIN_BRLOCK_PAGE, GOBLIN_BRLOCK_ROWS),
    (GOBLIN_BWLOCK_PAGE, GOBLIN_BWLOCK_ROWS),
    (GOBLIN_RWEXTEND_PAGE, GOBLIN_RWEXTEND_ROWS),
    (GOBLIN_RWUNLOCK_PAGE, GOBLIN_RWUNLOCK_ROWS),
    (GOBLIN_RWHELD_PAGE, GOBLIN_RWHELD_ROWS),
    (INCREX_PAGE, INCREX_ROWS),
    (DELEX_PAGE, DELEX_ROWS),
    (DIGEST_PAGE, DIGEST_ROWS),
    (DELIFEQ_PAGE, DELIFEQ_ROWS),
    (CL_THROTTLE_PAGE, CL_THROTTLE_ROWS),
];
