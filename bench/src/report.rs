//! The benchmark's output: a markdown report (tables, targets, the machine) and a PNG plot.

use crate::load::{Workload, COUNTER_GROUP, POLICY_GROUP, WINDOW_GROUP};
use crate::{Config, ServerResults};
use goblin_testkit::Flavor;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

/// A target: its wording, its bound, and the measured ratio (where it applies to a server).
type Target = (
    &'static str,
    f64,
    Box<dyn Fn(&ServerResults) -> Option<f64>>,
);
/// A row of the memory table: its label and how to print one server's cell.
type MemoryRow = (&'static str, fn(&ServerResults) -> String);

const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .next()
                .map(|l| l.split_whitespace().nth(1).unwrap_or("0").to_string())
        })
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| format!("{:.0} GiB", kb / 1024.0 / 1024.0))
        .unwrap_or_default();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cpu}, {cores} cores, {memory}, Linux {}", kernel.trim())
}

fn today() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn ratio(results: &ServerResults, depth: usize, workload: Workload, to: Workload) -> f64 {
    let of = |w: Workload| {
        results
            .throughput
            .get(&(depth, w))
            .map(|s| s.ops_per_sec)
            .unwrap_or(f64::NAN)
    };
    of(workload) / of(to)
}

/// The headline figures the README shows (bench/results/headline.md): each command against
/// its anchors, the range over the servers measured, pipelined at depth 16.
pub fn headline(results: &[ServerResults]) -> String {
    let range = |of: Workload, to: Workload| {
        let values: Vec<f64> = results
            .iter()
            .map(|r| ratio(r, 16, of, to))
            .filter(|v| v.is_finite())
            .collect();
        let (low, high) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                (l.min(*v), h.max(*v))
            });
        if values.is_empty() {
            "-".to_string()
        } else if format!("{low:.1}") == format!("{high:.1}") {
            format!("{low:.1}x")
        } else {
            format!("{low:.1}x to {high:.1}x")
        }
    };
    let on_810 = |of: Workload, to: Workload| {
        results
            .iter()
            .find(|r| r.flavor == Flavor::Redis810)
            .map(|r| format!("{:.2}x", ratio(r, 16, of, to)))
            .unwrap_or_else(|| "-".into())
    };
    let servers: Vec<&str> = results.iter().map(|r| r.flavor.label()).collect();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "Requests per second, pipelined, on {} ({}):
",
        servers.join(", "),
        today()
    );
    let _ = writeln!(
        md,
        "| command | against its Lua idiom (EVALSHA) | against the native (Redis 8.10) |"
    );
    let _ = writeln!(md, "|---|---|---|");
    let _ = writeln!(
        md,
        "| GOBLIN.INCREX | {} | {} the INCREX limiter |",
        range(Workload::Increx, Workload::IncrexEvalsha),
        on_810(Workload::Increx, Workload::IncrexLimiter)
    );
    let _ = writeln!(
        md,
        "| GOBLIN.ZWINDOW | {} | (none) |",
        range(Workload::Zwindow, Workload::ZwindowEvalsha)
    );
    let _ = writeln!(
        md,
        "| GOBLIN.GCRA | {} (redis-cell's arithmetic) | {} Redis's GCRA |",
        range(Workload::Gcra, Workload::GcraEvalsha),
        on_810(Workload::Gcra, Workload::GcraNative)
    );
    let _ = writeln!(
        md,
        "| GOBLIN.MGCRA, 4 policies | {} (a union script) | (none); {} four pipelined GOBLIN.GCRA |",
        range(Workload::Mgcra4, Workload::GcraUnion4Evalsha),
        range(Workload::Mgcra4, Workload::Gcra4Pipelined)
    );
    md
}

/// `readme` with its headline block (between `<!-- headline` and `<!-- /headline -->`) holding
/// `headline`; `None` if it has no such block.
pub fn splice_headline(readme: &str, headline: &str) -> Option<String> {
    let open = readme.find("<!-- headline")?;
    let body = open + readme[open..].find("-->")? + 3;
    let close = body + readme[body..].find("<!-- /headline -->")?;
    Some(format!(
        "{}\n{}{}",
        &readme[..body],
        headline,
        &readme[close..]
    ))
}

pub fn markdown(config: &Config, results: &[ServerResults], took: Duration) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Goblin benchmark{}\n",
        if config.smoke {
            " (smoke run: numbers mean nothing)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        md,
        "{}; {}. Client and server share the machine. Each run {:?}, {} connections, median of {} interleaved rounds; took {:.0?}.\n",
        today(),
        machine(),
        config.duration,
        config.conns,
        config.rounds,
        took
    );
    for r in results {
        let _ = writeln!(md, "- {}: {}", r.flavor.label(), r.version);
    }

    let _ = writeln!(md, "\n## Targets (pipelined, depth 16)\n");
    let _ = writeln!(
        md,
        "Each command against its anchors: the native counterpart on the same server, where one exists, and the Lua idiom it replaces.\n"
    );
    table_head(
        &mut md,
        "target",
        results.iter().map(|r| r.flavor.label()),
        1,
    );
    // The anchors: the native counterpart on the same server where there is one (Redis 8.10
    // has INCREX, and GCRA in the build measured), and the Lua idiom each command replaces.
    let on_810 = |r: &ServerResults, of: Workload, to: Workload| {
        (r.flavor == Flavor::Redis810).then(|| ratio(r, 16, of, to))
    };
    let targets: [Target; 9] = [
        (
            "GOBLIN.INCREX >= 1.5x its Lua idiom (EVALSHA)",
            1.5,
            Box::new(|r| Some(ratio(r, 16, Workload::Increx, Workload::IncrexEvalsha))),
        ),
        (
            "GOBLIN.ZWINDOW >= 1.5x its Lua idiom (EVALSHA)",
            1.5,
            Box::new(|r| Some(ratio(r, 16, Workload::Zwindow, Workload::ZwindowEvalsha))),
        ),
        (
            "the INCREX stand-in >= 1.5x Redis's limiter as Lua (EVALSHA)",
            1.5,
            Box::new(|r| {
                (r.flavor != Flavor::Redis810).then(|| {
                    ratio(
                        r,
                        16,
                        Workload::IncrexLimiter,
                        Workload::IncrexLimiterEvalsha,
                    )
                })
            }),
        ),
        (
            "GOBLIN.GCRA >= 0.9x Redis's own GCRA (Redis 8.10 built with it)",
            0.9,
            Box::new(move |r| on_810(r, Workload::Gcra, Workload::GcraNative)),
        ),
        (
            "GOBLIN.GCRA >= 2x redis-cell's GCRA as Lua (EVALSHA)",
            2.0,
            Box::new(|r| Some(ratio(r, 16, Workload::Gcra, Workload::GcraEvalsha))),
        ),
        (
            "GOBLIN.MGCRA, 4 policies >= 2x 4 GOBLIN.GCRA pipelined",
            2.0,
            Box::new(|r| Some(ratio(r, 16, Workload::Mgcra4, Workload::Gcra4Pipelined))),
        ),
        (
            "GOBLIN.MGCRA, 4 policies >= 3x the Lua union script (EVALSHA)",
            3.0,
            Box::new(|r| Some(ratio(r, 16, Workload::Mgcra4, Workload::GcraUnion4Evalsha))),
        ),
        (
            "INCREX bytes per counter <= 1.25x INCR + EXPIRE (Redis 7.0)",
            1.25,
            Box::new(|r| {
                (r.flavor == Flavor::Redis70)
                    .then(|| r.memory.increx_per_counter / r.memory.incr_expire_per_counter)
            }),
        ),
        (
            "INCREX bytes per counter <= 1.12x INCR + EXPIRE (Redis 8.2)",
            1.12,
            Box::new(|r| {
                (r.flavor == Flavor::Redis82)
                    .then(|| r.memory.increx_per_counter / r.memory.incr_expire_per_counter)
            }),
        ),
    ];
    for (name, bound, value) in &targets {
        let cells: Vec<String> = results
            .iter()
            .map(|r| match value(r) {
                None => "".into(),
                Some(v) => {
                    let met = if name.contains("<=") {
                        v <= *bound
                    } else {
                        v >= *bound
                    };
                    format!("{v:.2}x {}", if met { "met" } else { "**missed**" })
                }
            })
            .collect();
        let _ = writeln!(md, "| {name} | {} |", cells.join(" | "));
    }

    for &depth in &config.depths {
        let _ = writeln!(
            md,
            "\n## Throughput and latency, {} ({} connections)\n",
            if depth > 1 {
                format!("pipelined, depth {depth}")
            } else {
                "unpipelined".into()
            },
            config.conns
        );
        table_head(
            &mut md,
            "command",
            results
                .iter()
                .map(|r| format!("{} ops/s (ratio) p50/p99 us", r.flavor.label())),
            1,
        );
        for workload in COUNTER_GROUP
            .iter()
            .chain(&WINDOW_GROUP)
            .chain(&POLICY_GROUP)
        {
            let cells: Vec<String> = results
                .iter()
                .map(|r| match r.throughput.get(&(depth, *workload)) {
                    Some(s) => format!(
                        "{:.0} ({:.2}x) {:.0}/{:.0}",
                        s.ops_per_sec,
                        ratio(r, depth, *workload, workload.baseline()),
                        s.p50_us,
                        s.p99_us
                    ),
                    None => "".into(),
                })
                .collect();
            let _ = writeln!(md, "| {} | {} |", workload.label(), cells.join(" | "));
        }
    }

    let _ = writeln!(
        md,
        "\n## Sets of GCRA policies, one decision per request (pipelined, depth 16)\n"
    );
    let _ = writeln!(
        md,
        "Requests per second: GOBLIN.MGCRA with 4 policies (all or nothing) against the same 4 policies as 4 pipelined GOBLIN.GCRA calls (each charged whatever the others decide) and as one Lua script that decides all or nothing. Goals: at least 2x the pipelined calls, at least 3x the script.\n"
    );
    table_head(
        &mut md,
        "ratio",
        results.iter().map(|r| r.flavor.label()),
        1,
    );
    let policy_rows: [(&str, Workload, Workload); 4] = [
        (
            "GOBLIN.MGCRA 4 policies / 4 GOBLIN.GCRA pipelined",
            Workload::Mgcra4,
            Workload::Gcra4Pipelined,
        ),
        (
            "GOBLIN.MGCRA 4 policies / the Lua union script",
            Workload::Mgcra4,
            Workload::GcraUnion4Evalsha,
        ),
        (
            "GOBLIN.MGCRA 1 policy / GOBLIN.GCRA",
            Workload::Mgcra1,
            Workload::Gcra,
        ),
        (
            "GOBLIN.MGCRA 4 policies / 1 policy",
            Workload::Mgcra4,
            Workload::Mgcra1,
        ),
    ];
    for (name, of, to) in policy_rows {
        let cells: Vec<String> = results
            .iter()
            .map(|r| format!("{:.2}x", ratio(r, 16, of, to)))
            .collect();
        let _ = writeln!(md, "| {name} | {} |", cells.join(" | "));
    }

    let _ = writeln!(md, "\n## Server time per GOBLIN.ZWINDOW call (`usec_per_call`) against members in the window\n");
    let _ = writeln!(md, "Each call evicts one member and admits one.\n");
    table_head(
        &mut md,
        "members",
        results.iter().map(|r| r.flavor.label()),
        1,
    );
    for (i, &size) in config.sizes.iter().enumerate() {
        let cells: Vec<String> = results
            .iter()
            .map(|r| format!("{:.2}", r.by_size[i].1))
            .collect();
        let _ = writeln!(md, "| {size} | {} |", cells.join(" | "));
    }

    let _ = writeln!(
        md,
        "\n## Server time per call against members evicted per call ({} members stay in the window)\n",
        config.eviction_base
    );
    table_head(
        &mut md,
        "evicted",
        results
            .iter()
            .map(|r| format!("{0} ZWINDOW us | {0} ZREMRANGEBYSCORE us", r.flavor.label())),
        2,
    );
    for (i, &evicted) in config.evictions.iter().enumerate() {
        let cells: Vec<String> = results
            .iter()
            .map(|r| {
                format!(
                    "{:.2} | {:.2}",
                    r.by_evicted[i].zwindow_us, r.by_evicted[i].zremrangebyscore_us
                )
            })
            .collect();
        let _ = writeln!(md, "| {evicted} | {} |", cells.join(" | "));
    }

    let _ = writeln!(
        md,
        "\n## A backlog: a window that idled with 90% of its members out of it\n"
    );
    table_head(&mut md, "", results.iter().map(|r| r.flavor.label()), 1);
    let backlog_rows: [MemoryRow; 6] = [
        ("members / evicted", |r| {
            format!("{} / {}", r.backlog.members, r.backlog.evicted)
        }),
        ("ZREMRANGEBYSCORE: server blocked (ms)", |r| {
            format!("{:.1}", r.backlog.zrem_blocked_us / 1000.0)
        }),
        ("ZREMRANGEBYSCORE: us per member", |r| {
            format!(
                "{:.3}",
                r.backlog.zrem_blocked_us / r.backlog.evicted as f64
            )
        }),
        ("GOBLIN.ZWINDOW: calls to drain it (limit 100)", |r| {
            r.backlog.zwindow_calls.to_string()
        }),
        ("GOBLIN.ZWINDOW: longest call (ms)", |r| {
            format!("{:.2}", r.backlog.zwindow_max_us / 1000.0)
        }),
        ("GOBLIN.ZWINDOW: us per member, all calls", |r| {
            format!(
                "{:.3}",
                r.backlog.zwindow_total_us / r.backlog.evicted as f64
            )
        }),
    ];
    for (name, cell) in backlog_rows {
        table_row(&mut md, name, results.iter().map(cell));
    }

    let _ = writeln!(md, "\n## Memory\n");
    table_head(
        &mut md,
        "bytes",
        results.iter().map(|r| r.flavor.label()),
        1,
    );
    let rows: [MemoryRow; 5] = [
        ("per counter, GOBLIN.INCREX", |r| {
            format!("{:.1}", r.memory.increx_per_counter)
        }),
        ("per counter, INCR + EXPIRE", |r| {
            format!(
                "{:.1} ({:.2}x)",
                r.memory.incr_expire_per_counter,
                r.memory.increx_per_counter / r.memory.incr_expire_per_counter
            )
        }),
        ("per member, GOBLIN.ZWINDOW", |r| {
            format!("{:.1}", r.memory.zwindow_per_member)
        }),
        ("per member, ZADD", |r| {
            format!(
                "{:.1} ({:.2}x)",
                r.memory.zadd_per_member,
                r.memory.zwindow_per_member / r.memory.zadd_per_member
            )
        }),
        ("per member, GOBLIN.ZWINDOW, 1000 per key", |r| {
            format!("{:.1}", r.memory.zwindow_per_member_large)
        }),
    ];
    for (name, cell) in rows {
        table_row(&mut md, name, results.iter().map(cell));
    }
    if let Some(r) = results.first() {
        let _ = writeln!(
            md,
            "\n{} counters, one per key; {} sorted-set members, 100 per key (the server's compact listpack encoding) and again 1,000 per key (skiplist). The ratio in brackets is Goblin's over the core command's.",
            r.memory.counters, r.memory.members
        );
    }
    md
}

/// One colour per server of the matrix, in `Flavor::ALL` order.
const COLORS: [RGBColor; 4] = [
    RGBColor(200, 60, 50),
    RGBColor(40, 100, 190),
    RGBColor(40, 150, 80),
    RGBColor(150, 90, 180),
];
const _: () = assert!(
    COLORS.len() >= Flavor::ALL.len(),
    "a colour for every server"
);

/// Three panels: throughput ratios, time per call against members, against evictions.
pub fn plot(config: &Config, results: &[ServerResults], path: &Path) {
    let font = std::fs::read(FONT)
        .unwrap_or_else(|e| panic!("{FONT}: {e} (apt-get install fonts-dejavu-core)"));
    let _ = plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        Box::leak(font.into_boxed_slice()),
    );
    // Throughput across the top, where sixteen groups of bars have room for their labels;
    // the two ZWINDOW cost curves side by side below it.
    let root = BitMapBackend::new(path, (1800, 1180)).into_drawing_area();
    root.fill(&WHITE).expect("fill");
    let (upper, lower) = root.split_vertically(580);
    let lower = lower.split_evenly((1, 2));
    let panels = [&upper, &lower[0], &lower[1]];

    // (a) Throughput as a ratio to the core command, pipelined.
    let compared: Vec<Workload> = COUNTER_GROUP
        .iter()
        .chain(&WINDOW_GROUP)
        .copied()
        .filter(|w| w.baseline() != *w)
        .collect();
    let depth = config.depths[0];
    let top = results
        .iter()
        .flat_map(|r| {
            compared
                .iter()
                .map(move |w| ratio(r, depth, *w, w.baseline()))
        })
        .filter(|v| v.is_finite())
        .fold(1.2f64, f64::max);
    let mut chart = ChartBuilder::on(panels[0])
        .caption(
            format!("Throughput / core command (depth {depth})"),
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(10)
        .y_label_area_size(50)
        // Room below zero for the group labels, drawn as text at each group's centre.
        .build_cartesian_2d(0f64..compared.len() as f64, -0.12 * top..top * 1.1)
        .expect("chart");
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("ratio (1.0 = INCR or ZADD)")
        .draw()
        .expect("mesh");
    let centered =
        TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, workload) in compared.iter().enumerate() {
        let (first, second) = short(*workload);
        for (line, text) in [first, second].into_iter().enumerate() {
            let y = -0.015 * top - line as f64 * 0.05 * top;
            chart
                .draw_series(std::iter::once(Text::new(
                    text,
                    (i as f64 + 0.5, y),
                    centered.clone(),
                )))
                .expect("label");
        }
    }
    let width = 0.8 / results.len() as f64;
    for (s, r) in results.iter().enumerate() {
        let bars = compared.iter().enumerate().map(|(i, w)| {
            let x = i as f64 + 0.1 + s as f64 * width;
            let v = ratio(r, depth, *w, w.baseline());
            Rectangle::new(
                [
                    (x, 0.0),
                    (x + width * 0.95, if v.is_finite() { v } else { 0.0 }),
                ],
                COLORS[s].filled(),
            )
        });
        chart
            .draw_series(bars)
            .expect("bars")
            .label(r.flavor.label())
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 12, y + 5)], COLORS[s].filled())
            });
    }
    chart
        .draw_series(LineSeries::new(
            [(0.0, 1.0), (compared.len() as f64, 1.0)],
            BLACK.stroke_width(1),
        ))
        .expect("line");
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()
        .expect("legend");

    // (b) Time per call against members in the window: flat means O(log n).
    let max_us = results
        .iter()
        .flat_map(|r| r.by_size.iter().map(|(_, us)| *us))
        .fold(0.5f64, f64::max);
    let (min_n, max_n) = (
        *config.sizes.first().unwrap_or(&10) as f64,
        *config.sizes.last().unwrap_or(&1000) as f64,
    );
    let mut chart = ChartBuilder::on(panels[1])
        .caption(
            "ZWINDOW usec_per_call vs members in window",
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(50)
        .build_cartesian_2d((min_n..max_n).log_scale(), 0f64..max_us * 1.3)
        .expect("chart");
    chart
        .configure_mesh()
        .x_desc("members in the window (1 evicted, 1 admitted per call)")
        .y_desc("microseconds per call")
        .draw()
        .expect("mesh");
    for (s, r) in results.iter().enumerate() {
        let points: Vec<(f64, f64)> = r.by_size.iter().map(|(n, us)| (*n as f64, *us)).collect();
        chart
            .draw_series(LineSeries::new(points.clone(), COLORS[s].stroke_width(2)))
            .expect("line")
            .label(r.flavor.label())
            .legend(move |(x, y)| {
                PathElement::new([(x, y), (x + 16, y)], COLORS[s].stroke_width(2))
            });
        chart
            .draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 4, COLORS[s].filled())),
            )
            .expect("points");
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()
        .expect("legend");

    // (c) Time per call against members evicted, ZWINDOW next to ZREMRANGEBYSCORE.
    let max_us = results
        .iter()
        .flat_map(|r| {
            r.by_evicted
                .iter()
                .map(|e| e.zwindow_us.max(e.zremrangebyscore_us))
        })
        .fold(0.5f64, f64::max);
    let max_e = *config.evictions.last().unwrap_or(&10) as f64 + 1.0;
    let mut chart = ChartBuilder::on(panels[2])
        .caption(
            "usec_per_call vs members evicted per call",
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (1f64..max_e).log_scale(),
            (0.1f64..max_us * 1.5).log_scale(),
        )
        .expect("chart");
    chart
        .configure_mesh()
        .x_desc("members evicted per call + 1")
        .y_desc("microseconds per call")
        .draw()
        .expect("mesh");
    for (s, r) in results.iter().enumerate() {
        let zwindow: Vec<(f64, f64)> = r
            .by_evicted
            .iter()
            .map(|e| (e.evicted as f64 + 1.0, e.zwindow_us))
            .collect();
        let zrem: Vec<(f64, f64)> = r
            .by_evicted
            .iter()
            .map(|e| (e.evicted as f64 + 1.0, e.zremrangebyscore_us))
            .collect();
        chart
            .draw_series(LineSeries::new(zwindow, COLORS[s].stroke_width(2)))
            .expect("line")
            .label(format!("{} ZWINDOW", r.flavor.label()))
            .legend(move |(x, y)| {
                PathElement::new([(x, y), (x + 16, y)], COLORS[s].stroke_width(2))
            });
        let light = COLORS[s].mix(0.45);
        chart
            .draw_series(LineSeries::new(zrem, light.stroke_width(2)))
            .expect("line")
            .label(format!("{} ZREMRANGEBYSCORE", r.flavor.label()))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], light.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()
        .expect("legend");
    root.present().expect("write png");
}

/// A two-line label for a bar group.
fn short(workload: Workload) -> (&'static str, &'static str) {
    match workload {
        Workload::Increx => ("INCREX", ""),
        Workload::IncrexEvalsha => ("INCREX Lua", "EVALSHA"),
        Workload::IncrexFcall => ("INCREX Lua", "FCALL"),
        Workload::MultiIncrExpireNx => ("MULTI INCR", "EXPIRE NX"),
        Workload::IncrexLimiter => ("INCREX", "limiter"),
        Workload::IncrexLimiterEvalsha => ("limiter Lua", "EVALSHA"),
        Workload::Gcra => ("GCRA", ""),
        Workload::GcraNative => ("GCRA", "Redis's"),
        Workload::GcraEvalsha => ("GCRA Lua", "EVALSHA"),
        Workload::IncrPttlEvalsha => ("INCR+PTTL", "Lua"),
        Workload::ZwindowServerClock => ("ZWINDOW", "now = *"),
        Workload::Zwindow => ("ZWINDOW", ""),
        Workload::ZwindowEvalsha => ("ZWINDOW Lua", "EVALSHA"),
        Workload::ZwindowFcall => ("ZWINDOW Lua", "FCALL"),
        other => (other.label(), ""),
    }
}

/// A markdown table's header row and separator: `first`, then one column per label, each
/// label spanning `per_label` columns.
fn table_head<L: std::fmt::Display>(
    md: &mut String,
    first: &str,
    labels: impl Iterator<Item = L>,
    per_label: usize,
) {
    let labels: Vec<String> = labels.map(|l| l.to_string()).collect();
    let _ = writeln!(md, "| {first} | {} |", labels.join(" | "));
    let _ = writeln!(md, "|---|{}", "---|".repeat(labels.len() * per_label));
}

/// A markdown table row: `first`, then the cells.
fn table_row(md: &mut String, first: &str, cells: impl Iterator<Item = String>) {
    let cells: Vec<String> = cells.collect();
    let _ = writeln!(md, "| {first} | {} |", cells.join(" | "));
}
