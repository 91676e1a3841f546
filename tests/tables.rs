//! Every command page's table of situations (`docs/commands/`) and the tests' rows are the same
//! list, so neither can change without the other; and every page's rows hold on every server
//! (the stand-ins' whether the server has its own command or Goblin's).

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
    /// Every page's rows, each with its setup, reply and effect: the stand-ins' whether the server
    /// has its own command or Goblin's. A page added to `PAGES` runs here with no other line.
    fn every_page_holds_on_every_server(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for (page, rows) in PAGES {
            // The keys of a page's rows are named after it (`goblin_lock:row0:...` for
            // `docs/commands/goblin.lock.md`), so no two pages' rows share a key.
            let name = page
                .trim_start_matches("docs/commands/")
                .trim_end_matches(".md")
                .replace('.', "_");
            run_table(&mut c, &name, rows);
        }
    }
}
