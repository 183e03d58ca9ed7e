//! The run's record: every document's outcome in `outcomes.tsv` and the summary section of
//! `CORPUS.md` (counts by outcome, causes grouped without their names, percentiles, the checks).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;

use super::{JOBS, MIB, Outcome, PACKAGE, Run, SECTION, VERSION, seconds_bound, workspace_name};

pub(super) fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut cut: String = line.chars().take(240).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    cut
}

/// What a cause says once the names in it are taken out, so that one kind of failure in many
/// documents is one line: pointers, quoted names and numbers become `…`.
fn cause(message: &str) -> String {
    let mut out = String::new();
    let mut words = message.split(' ').peekable();
    while let Some(word) = words.next() {
        let word = if word.contains("#/") || word.starts_with('/') || word.contains(".json") {
            "…"
        } else if word.starts_with(['`', '"', '\'']) {
            // A quoted name, possibly of several words.
            let quote = word.chars().next().expect("not empty");
            let mut closed = word.len() > 1 && word.trim_end_matches([':', ',', '.', ')']).ends_with(quote);
            while !closed {
                match words.next() {
                    Some(next) => closed = next.trim_end_matches([':', ',', '.', ')']).ends_with(quote),
                    None => break,
                }
            }
            "…"
        } else if word.chars().any(|c| c.is_ascii_digit()) {
            "…"
        } else {
            word
        };
        if !(word == "…" && out.ends_with('…')) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word);
        }
    }
    first_line(&out)
}

/// Every document's outcome, one a line, for whoever looks into one (not committed).
pub(super) fn write_outcomes(work: &Path, runs: &[(usize, Run)]) -> anyhow::Result<()> {
    let mut text =
        String::from("workspace\tdocument\toutcome\tseconds\tpeak_mib\twarnings\toperations\tleft_out\tdetail\n");
    for (i, run) in runs {
        let (left_out, detail) = match &run.outcome {
            Outcome::LeftOut(causes) => (causes.len(), causes.first().cloned().unwrap_or_default()),
            Outcome::Refused(why) | Outcome::Panic(why) => (0, why.clone()),
            _ => (0, String::new()),
        };
        text.push_str(&format!(
            "{}\t{}\t{}\t{:.3}\t{:.0}\t{}\t{}\t{left_out}\t{}\n",
            workspace_name(*i),
            run.name,
            run.outcome.label(),
            run.seconds,
            run.peak_mib,
            run.warnings,
            run.operations,
            first_line(&detail).replace('\t', " ")
        ));
    }
    let path = work.join("outcomes.tsv");
    std::fs::write(&path, text).with_context(|| path.display().to_string())?;
    eprintln!("every document's outcome: {}", path.display());
    Ok(())
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// The section of CORPUS.md: counts by outcome, causes, percentiles, the extremes, the checks.
pub(super) fn summary(
    runs: &[Run],
    checks: &[(String, Result<f64, crate::corpus::CheckFailed>)],
    elapsed: Option<f64>,
    timed_alone: Option<usize>,
    ci: bool,
) -> String {
    let took = match elapsed {
        Some(elapsed) => format!("in {:.0} min", elapsed / 60.0),
        None => "(summarised again from its outcomes.tsv: `--check-sample`)".into(),
    };
    let alone = match timed_alone {
        Some(n) => format!("the {n} over the time bound so were timed again alone, and that figure counts"),
        None => "a document over the time bound so was timed again alone, and that figure counts".into(),
    };
    let build = if cfg!(debug_assertions) { "a debug build" } else { "a release build" };
    let which = if ci {
        format!("a deterministic sample of {} documents", runs.len())
    } else {
        format!("all {} documents", runs.len())
    };
    let mut text = format!(
        "{SECTION}\n\n\
         Written by `cargo xtask corpus --directory` (see `xtask/src/directory/`) with {build} of the generator: \
         {which} of npm `{PACKAGE}@{VERSION}` (the APIs.guru collection: OpenAPI 3.0 and 3.1 from Azure, AWS, \
         Google, governments and small vendors), each generated as a workspace of its own by a child process, {JOBS} \
         at a time, {took}; {alone}. Bounds: {} s and {MIB:.0} MiB a document (peak resident memory of the \
         generating process).\n\n",
        seconds_bound(),
    );
    let mut by_outcome: BTreeMap<&str, usize> = BTreeMap::new();
    for run in runs {
        *by_outcome.entry(run.outcome.label()).or_default() += 1;
    }
    let written = runs.iter().filter(|r| r.outcome.written()).count();
    let documents = runs.iter().filter(|r| r.is_document).count();
    let written_documents = runs.iter().filter(|r| r.is_document && r.outcome.written()).count();
    text.push_str("| outcome | documents |\n|---|---:|\n");
    for label in ["written", "written, operations left out", "refused", "panic", "timeout", "out of memory"] {
        text.push_str(&format!("| {label} | {} |\n", by_outcome.get(label).copied().unwrap_or(0)));
    }
    let over = runs.iter().filter(|r| r.over_bounds()).count();
    text.push_str(&format!(
        "\nWritten: {written} of {} ({:.1} %); of the {documents} texts that are OpenAPI documents, {written_documents} \
         ({:.1} %). Over a bound: {over}.\n",
        runs.len(),
        100.0 * written as f64 / runs.len().max(1) as f64,
        100.0 * written_documents as f64 / documents.max(1) as f64,
    ));

    let operations: usize = runs.iter().map(|r| r.operations).sum();
    let mut left_out: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for run in runs {
        if let Outcome::LeftOut(causes) = &run.outcome {
            for why in causes {
                let entry = left_out.entry(cause(why)).or_insert((0, run.name.clone()));
                entry.0 += 1;
            }
        }
    }
    let left: usize = left_out.values().map(|(n, _)| n).sum();
    text.push_str(&format!(
        "\nOperations: {operations} in all; left out: {left} ({:.3} %).\n",
        100.0 * left as f64 / operations.max(1) as f64
    ));
    let mut refusals: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for run in runs {
        if let Outcome::Refused(why) | Outcome::Panic(why) = &run.outcome {
            let entry = refusals.entry(cause(why)).or_insert((0, run.name.clone()));
            entry.0 += 1;
        }
    }
    for (title, causes) in [("Refusals and panics", &refusals), ("Operations left out", &left_out)] {
        if causes.is_empty() {
            continue;
        }
        text.push_str(&format!(
            "\n{title}, by cause (a document for each):\n\n| cause | count | e.g. |\n|---|---:|---|\n"
        ));
        let mut causes: Vec<_> = causes.iter().collect();
        causes.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
        for (why, (count, example)) in causes {
            text.push_str(&format!("| {} | {count} | `{example}` |\n", why.replace('|', "\\|")));
        }
    }

    let mut seconds: Vec<f64> = runs.iter().map(|r| r.seconds).collect();
    let mut mib: Vec<f64> = runs.iter().map(|r| r.peak_mib).collect();
    seconds.sort_by(f64::total_cmp);
    mib.sort_by(f64::total_cmp);
    text.push_str("\n| | median | 90 % | 99 % | max |\n|---|---:|---:|---:|---:|\n");
    text.push_str(&format!(
        "| generate (s) | {:.2} | {:.2} | {:.2} | {:.2} |\n| peak memory (MiB) | {:.0} | {:.0} | {:.0} | {:.0} |\n",
        percentile(&seconds, 0.5),
        percentile(&seconds, 0.9),
        percentile(&seconds, 0.99),
        percentile(&seconds, 1.0),
        percentile(&mib, 0.5),
        percentile(&mib, 0.9),
        percentile(&mib, 0.99),
        percentile(&mib, 1.0),
    ));
    let mut slowest: Vec<&Run> = runs.iter().collect();
    slowest.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    let mut largest: Vec<&Run> = runs.iter().collect();
    largest.sort_by(|a, b| b.peak_mib.total_cmp(&a.peak_mib));
    let named = |runs: &[&Run], figure: &dyn Fn(&Run) -> String| -> String {
        runs.iter().take(5).map(|r| format!("`{}` ({})", r.name, figure(r))).collect::<Vec<_>>().join(", ")
    };
    text.push_str(&format!(
        "\nSlowest: {}.\nLargest: {}.\n",
        named(&slowest, &|r| format!("{:.1} s", r.seconds)),
        named(&largest, &|r| format!("{:.0} MiB", r.peak_mib)),
    ));

    if !checks.is_empty() {
        text.push('\n');
        text.push_str(&check_line(checks));
    }
    text
}

/// The summary's line on the compiled sample.
fn check_line(checks: &[(String, Result<f64, crate::corpus::CheckFailed>)]) -> String {
    let passed = checks.iter().filter(|(_, r)| r.is_ok()).count();
    let mut text = format!(
        "`cargo check --workspace` (default features, `-D warnings`) of the first {} written workspaces in the \
         run's order (a hash of the document's id): {passed} pass ({:.1} %).",
        checks.len(),
        100.0 * passed as f64 / checks.len().max(1) as f64
    );
    let failed: Vec<String> = checks.iter().filter(|(_, r)| r.is_err()).map(|(n, _)| format!("`{n}`")).collect();
    if !failed.is_empty() {
        text.push_str(&format!(" Failing: {}.", failed.join(", ")));
    }
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::cause;

    #[test]
    fn a_cause_is_its_words_without_names() {
        assert_eq!(
            cause("#/components/responses/400Error: produced no model named `400error`"),
            "… produced no model named …"
        );
        assert_eq!(
            cause("invalid type: null, expected struct Response at line 3"),
            "invalid type: null, expected struct Response at line …"
        );
    }
}
