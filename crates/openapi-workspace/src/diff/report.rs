//! A diff written for people and for tools (text, JSON, Markdown), and its semantic-versioning
//! verdict: the version change the changes ask for against the one `info.version` made.

use std::fmt::Write;

use super::{Change, Diff, Level};

/// The version change a diff asks for, and whether `info.version` made it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    /// `major` for a breaking change, `minor` for an addition, else `patch`.
    pub needed: Bump,
    pub base_version: Option<String>,
    pub head_version: Option<String>,
    /// What the versions did, when both are `MAJOR.MINOR.PATCH` (a leading `v` and a suffix
    /// after `-` or `+` aside).
    pub made: Option<Bump>,
    /// Whether the version change made is at least the one needed (unknown versions: no).
    pub enough: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bump {
    None,
    Patch,
    Minor,
    Major,
}

impl Verdict {
    pub(super) fn of(changes: &[Change], base_version: Option<String>, head_version: Option<String>) -> Self {
        let needed = if changes.iter().any(|c| c.level == Level::Breaking) {
            Bump::Major
        } else if changes.iter().any(|c| c.rule.adds()) {
            Bump::Minor
        } else {
            Bump::Patch
        };
        let made = match (base_version.as_deref().and_then(semver), head_version.as_deref().and_then(semver)) {
            (Some(b), Some(h)) if h.0 > b.0 => Some(Bump::Major),
            (Some(b), Some(h)) if h.0 == b.0 && h.1 > b.1 => Some(Bump::Minor),
            (Some(b), Some(h)) if h.0 == b.0 && h.1 == b.1 && h.2 > b.2 => Some(Bump::Patch),
            (Some(b), Some(h)) if h == b => Some(Bump::None),
            _ => None,
        };
        // Below 1.0.0 a minor version may break, as semantic versioning allows.
        let early = base_version.as_deref().and_then(semver).is_some_and(|b| b.0 == 0);
        let enough = match made {
            Some(Bump::Minor) if early => true,
            Some(made) => made >= needed || (needed == Bump::Patch && made == Bump::None),
            None => false,
        };
        Verdict { needed, base_version, head_version, made, enough }
    }

    fn sentence(&self) -> String {
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
        let made = match self.made {
            Some(made) => format!("{made:?}").to_lowercase(),
            None => "not a semantic version change".into(),
        };
        format!(
            "the changes ask for a {} version; {} → {} is {made}: {}",
            format!("{:?}", self.needed).to_lowercase(),
            shown(&self.base_version),
            shown(&self.head_version),
            if self.enough { "enough" } else { "not enough" }
        )
    }
}

fn semver(version: &str) -> Option<(u64, u64, u64)> {
    let core = version.trim().trim_start_matches('v').split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|part| part.parse::<u64>().ok());
    Some((parts.next()??, parts.next().flatten().unwrap_or(0), parts.next().flatten().unwrap_or(0)))
}

/// How a diff is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

impl Diff {
    /// The changes, most serious first (in the documents' order within a level).
    pub fn sorted(&self) -> Vec<&Change> {
        let mut changes: Vec<&Change> = self.changes.iter().collect();
        changes.sort_by_key(|change| std::cmp::Reverse(change.level));
        changes
    }

    pub fn write(&self, format: Format) -> String {
        match format {
            Format::Json => {
                serde_json::to_string_pretty(&serde_json::json!({
                    "changes": self.sorted(),
                    "verdict": self.verdict,
                }))
                .expect("a diff is JSON")
                    + "\n"
            }
            Format::Text => {
                let mut out = String::new();
                for change in self.sorted() {
                    let level = format!("{:?}", change.level).to_uppercase();
                    let rule = serde_json::to_value(change.rule).ok().and_then(|v| v.as_str().map(str::to_owned));
                    let _ = writeln!(out, "{level:<8} {}: {}", rule.unwrap_or_default(), change.message);
                    for (side, at) in [("base", &change.base), ("head", &change.head)] {
                        if let Some(at) = at {
                            let _ = writeln!(out, "         {side} {at}");
                        }
                    }
                }
                let _ = writeln!(out, "{}; {}", self.counts(), self.verdict.sentence());
                out
            }
            Format::Markdown => {
                let mut out = String::from("| level | rule | change | base | head |\n|---|---|---|---|---|\n");
                for change in self.sorted() {
                    let rule = serde_json::to_value(change.rule).ok().and_then(|v| v.as_str().map(str::to_owned));
                    let cell = |text: &str| text.replace('|', "\\|");
                    let at = |at: &Option<String>| at.as_deref().map(|at| format!("`{at}`")).unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "| {} | `{}` | {} | {} | {} |",
                        format!("{:?}", change.level).to_lowercase(),
                        rule.unwrap_or_default(),
                        cell(&change.message),
                        at(&change.base),
                        at(&change.head)
                    );
                }
                let _ = writeln!(out, "\n{}; {}.", self.counts(), self.verdict.sentence());
                out
            }
        }
    }

    fn counts(&self) -> String {
        let count = |level: Level| self.changes.iter().filter(|c| c.level == level).count();
        format!(
            "{} breaking, {} warnings, {} additions",
            count(Level::Breaking),
            count(Level::Warning),
            count(Level::Info)
        )
    }

    /// Makes every change of `rule` breaking, saying `why` (a document's own rule: our servers
    /// refuse parameters they do not know, so for us a parameter removed breaks), and judges the
    /// version again.
    pub fn escalate(&mut self, rule: super::Rule, why: &str) {
        for change in self.changes.iter_mut().filter(|change| change.rule == rule) {
            change.level = Level::Breaking;
            change.message = format!("{} ({why})", change.message);
        }
        let Verdict { base_version, head_version, .. } = self.verdict.clone();
        self.verdict = Verdict::of(&self.changes, base_version, head_version);
    }

    /// Whether a change at `level` or above is in the diff.
    pub fn reaches(&self, level: Level) -> bool {
        self.changes.iter().any(|change| change.level >= level)
    }
}
