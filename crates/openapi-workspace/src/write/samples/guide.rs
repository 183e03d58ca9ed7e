//! "Getting started": a walk through the API made of operations' curl samples, as Markdown and
//! as the one script a reader would run.

use std::fmt::Write;

use super::Sample;
use crate::error::{Error, Result};

/// A walk-through of the API made of operations' curl samples ("Getting started"), each step's
/// values carried from the answers of the steps before in shell variables.
#[derive(Debug, Clone)]
pub struct GettingStarted {
    /// What comes before the steps (Markdown): how to start the service and set the variables.
    pub intro: String,
    pub steps: Vec<Step>,
}

/// One step of [`GettingStarted`].
#[derive(Debug, Clone)]
pub struct Step {
    /// What the reader does and why (Markdown).
    pub says: String,
    /// The operation whose curl sample the step is.
    pub operation_id: String,
    /// Values from earlier steps: a sample's binding (`id`, `body.endpoint_id`) and the shell
    /// variable holding it.
    pub uses: Vec<(String, String)>,
    /// The shell variable the answer's `id` is kept in, for the steps after.
    pub keeps: Option<String>,
}

/// [`GettingStarted`] written out: as Markdown (`## Getting started`), and its commands as one
/// script, which is what the reader would run.
#[derive(Debug, Clone, PartialEq)]
pub struct Guide {
    pub markdown: String,
    pub script: String,
}

/// The guide of `getting_started`, its steps' commands written from `samples`' curl ones:
/// each fails on an error status (`--fail-with-body`), and one whose answer's `id` is kept
/// shows the answer and assigns the id to its variable with `jq`.
pub fn guide(samples: &[Sample], getting_started: &GettingStarted) -> Result<Guide> {
    let mut markdown = format!("## Getting started\n\n{}\n", getting_started.intro.trim_end());
    let mut script = String::new();
    for (number, step) in getting_started.steps.iter().enumerate() {
        let sample = samples.iter().find(|s| s.operation_id == step.operation_id).ok_or_else(|| {
            Error::Document(format!("getting started: no operation {} to take a sample of", step.operation_id))
        })?;
        let mut command = sample.curl.replacen("curl ", "curl -sS --fail-with-body ", 1);
        for (binding, variable) in &step.uses {
            let (_, example) = sample.values.iter().find(|(name, _)| name == binding).ok_or_else(|| {
                Error::Document(format!("getting started: {} binds no `{binding}`", step.operation_id))
            })?;
            // In the single-quoted body the variable is spliced in between quotes.
            command = command
                .lines()
                .map(|line| {
                    let spliced = if line.trim_start().starts_with("-d '") {
                        format!("'\"${variable}\"'")
                    } else {
                        format!("${variable}")
                    };
                    line.replace(example.as_str(), &spliced)
                })
                .collect::<Vec<_>>()
                .join("\n");
        }
        if let Some(variable) = &step.keeps {
            command = format!("ANSWER=$({command})\necho \"$ANSWER\"\n{variable}=$(echo \"$ANSWER\" | jq -r .id)");
        }
        let _ = write!(markdown, "\n{}. {}\n\n   ```sh\n", number + 1, step.says.trim_end().replace('\n', "\n   "));
        for line in command.lines() {
            let _ = writeln!(markdown, "   {line}");
        }
        markdown.push_str("   ```\n");
        script.push_str(&command);
        script.push('\n');
    }
    Ok(Guide { markdown, script })
}
