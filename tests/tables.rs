//! Every command page's table of situations (`docs/commands/`) and the tests' rows are the same
//! list, so neither can change without the other; and the stand-ins' rows hold on every server,
//! native command or Goblin's. (GOBLIN.INCREX's, ZWINDOW's, CAD's and GCRA's rows run in their
//! commands' own test files.)

mod common;
use common::*;

#[test]
fn every_page_is_its_rows() {
    for (page, rows) in PAGES {
        assert_rows_are_the_page_table(page, rows);
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands");
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .expect("docs/commands")
        .map(|entry| {
            format!(
                "docs/commands/{}",
                entry.expect("entry").file_name().to_string_lossy()
            )
        })
        .collect();
    pages.sort();
    let mut tested: Vec<String> = PAGES.iter().map(|(page, _)| page.to_string()).collect();
    tested.sort();
    assert_eq!(
        pages, tested,
        "every command page has its rows, and every row table its page"
    );
}

on_every_server! {
    /// INCREX, DELEX, DIGEST and DELIFEQ as their pages say, whether the server has its own.
    fn the_native_pages_hold_on_every_server(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        run_table(&mut c, "increx", INCREX_ROWS);
        run_table(&mut c, "delex", DELEX_ROWS);
        run_table(&mut c, "digest", DIGEST_ROWS);
        run_table(&mut c, "delifeq", DELIFEQ_ROWS);
    }

    /// Goblin's read commands and the sliding window counter, as their pages say.
    fn the_window_pages_hold_on_every_server(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        run_table(&mut c, "zwstats", GOBLIN_ZWSTATS_ROWS);
        run_table(&mut c, "swindow", GOBLIN_SWINDOW_ROWS);
        run_table(&mut c, "swstats", GOBLIN_SWSTATS_ROWS);
    }

    /// The lock commands, and what the blocking ones answer at once.
    fn the_lock_pages_hold_on_every_server(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        run_table(&mut c, "lock", GOBLIN_LOCK_ROWS);
        run_table(&mut c, "block", GOBLIN_BLOCK_ROWS);
        run_table(&mut c, "extend", GOBLIN_EXTEND_ROWS);
        run_table(&mut c, "bzwindow", GOBLIN_BZWINDOW_ROWS);
    }

    /// The readers-writer lock's commands, and what the blocking ones answer at once.
    fn the_readers_writer_pages_hold_on_every_server(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        run_table(&mut c, "rlock", GOBLIN_RLOCK_ROWS);
        run_table(&mut c, "wlock", GOBLIN_WLOCK_ROWS);
        run_table(&mut c, "brlock", GOBLIN_BRLOCK_ROWS);
        run_table(&mut c, "bwlock", GOBLIN_BWLOCK_ROWS);
        run_table(&mut c, "rwextend", GOBLIN_RWEXTEND_ROWS);
        run_table(&mut c, "rwunlock", GOBLIN_RWUNLOCK_ROWS);
        run_table(&mut c, "rwheld", GOBLIN_RWHELD_ROWS);
    }

    /// The fixed windows in milliseconds, as their pages say.
    fn the_fixed_window_pages_hold_on_every_server(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        run_table(&mut c, "fwindow", GOBLIN_FWINDOW_ROWS);
        run_table(&mut c, "fwstats", GOBLIN_FWSTATS_ROWS);
        run_table(&mut c, "mfwindow", GOBLIN_MFWINDOW_ROWS);
    }
}
