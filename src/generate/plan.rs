//! A set of tables as a dependency graph for an existing workflow engine.
//!
//! [`generate()`](super::generate()) builds a set on one machine, one table
//! after another. A larger set is better handed to a scheduler: ninja or
//! make on one machine, Snakemake on one machine or, through its cluster
//! executors (Slurm, Kubernetes), on many that share a filesystem. [`jobs`]
//! lists one job per table, its inputs being the files of the sub-tables
//! its zeroing moves lead to, and [`render`] writes them in the engine's
//! own language. Each job runs `dtz50 generate TABLE`, which finds its
//! sub-tables already built and builds only its own file, atomically: a
//! job killed half way leaves no output, so an engine run that is killed
//! and started again goes on where it stopped.
//!
//! A job's needs are stated as the engine states them: Snakemake's
//! `threads` and `resources: mem_mb`; ninja and make have no notion of
//! memory, so their files carry it as a comment on each job, and the
//! caller chooses how many jobs run at once (`-j`).

use std::{fmt, path::Path, str::FromStr};

use thiserror::Error;

use crate::{
    format::EXTENSION, generate::slots::solved_positions, material::Material, value::Rule,
};

/// Bytes a build takes beyond its work arrays: the process, the writer's
/// buffers, the sub-tables' pages it reads.
const MEMORY_BASE: u64 = 64 << 20;

/// Bytes a build takes per position of one side, at most, counting a
/// position once where identical pieces give it several indices (the
/// solver's cells are kept so: [`solved_positions`]): its one-byte cells for both
/// sides, its bit arrays, the long DTZ values kept aside and the writer's
/// encoded segments. Measured peaks: KRBvKR (121 M positions per side)
/// 360 MiB, estimate 641 MiB; KRRvKR (61.5 M) 211 MiB; KRNvKNN (3.94 G)
/// 16.2 GiB, estimate 18.4 GiB. A pawn table keeps only its open levels,
/// so less (KRPvKR, 402 M, about 433 MiB).
const MEMORY_PER_POSITION: u64 = 5;

/// The engine a plan is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanFormat {
    /// A `build.ninja` file.
    Ninja,
    /// A Snakefile.
    Snakemake,
    /// A GNU makefile.
    Make,
}

impl FromStr for PlanFormat {
    type Err = ParsePlanFormatError;

    fn from_str(s: &str) -> Result<PlanFormat, ParsePlanFormatError> {
        match s {
            "ninja" => Ok(PlanFormat::Ninja),
            "snakemake" => Ok(PlanFormat::Snakemake),
            "make" => Ok(PlanFormat::Make),
            _ => Err(ParsePlanFormatError(s.to_string())),
        }
    }
}

impl fmt::Display for PlanFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PlanFormat::Ninja => "ninja",
            PlanFormat::Snakemake => "snakemake",
            PlanFormat::Make => "make",
        })
    }
}

/// An engine name that is not one of `ninja`, `snakemake`, `make`.
#[derive(Debug, Error)]
#[error("unknown plan format '{0}' (expected ninja, snakemake or make)")]
pub struct ParsePlanFormatError(String);

/// What every job of a plan shares.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// The command that runs dtz50 (a path, or a name on the `PATH`).
    pub dtz50: String,
    /// The table directory every job writes into and reads from.
    pub out: String,
    /// The draw rule.
    pub rule: Rule,
    /// Worker threads per job.
    pub threads: usize,
    /// Whether each job searches piece orders harder
    /// (`generate --thorough-orders`).
    pub thorough_orders: bool,
    /// A work directory for every job (`generate --work-dir`): the solver's
    /// arrays and checkpoints, so that a killed job started again resumes
    /// its table. On a cluster, a directory on the machine running the job.
    pub work_dir: Option<String>,
}

/// One table's build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The table it builds.
    pub material: Material,
    /// The tables whose files it reads (its zeroing moves' sub-tables).
    pub inputs: Vec<Material>,
    /// Bytes of memory it takes at most ([`memory_estimate`]).
    pub memory: u64,
}

/// A plan that cannot be written.
#[derive(Debug, Error)]
pub enum PlanError {
    /// A path or command the engines' languages cannot quote alike.
    #[error(
        "{what} '{text}' holds a character the plan cannot quote (whitespace, quotes, \\, $, :, #, % or braces)"
    )]
    Unquotable {
        /// Which option it came from.
        what: &'static str,
        /// The text.
        text: String,
    },
}

/// One job per table of `targets` and their sub-tables, sub-tables first.
pub fn jobs(targets: &[Material]) -> Vec<Job> {
    Material::with_dependencies(targets)
        .into_iter()
        .map(|material| Job {
            material,
            inputs: material.subtables(),
            memory: memory_estimate(material),
        })
        .collect()
}

/// Bytes of memory a build of `material` takes at most, from its
/// positions: five bytes per position of one side, plus 64 MiB.
pub fn memory_estimate(material: Material) -> u64 {
    solved_positions(material) * MEMORY_PER_POSITION + MEMORY_BASE
}

/// `jobs` as a file for `format`, every path as given in `options`.
///
/// # Errors
/// A path or command with a character the formats cannot all quote.
pub fn render(
    jobs: &[Job],
    format: PlanFormat,
    options: &PlanOptions,
) -> Result<String, PlanError> {
    check_quotable("--dtz50", &options.dtz50)?;
    check_quotable("--out", &options.out)?;
    if let Some(dir) = &options.work_dir {
        check_quotable("--work-dir", dir)?;
    }
    let file = |m: &Material| {
        Path::new(&options.out)
            .join(format!("{m}.{EXTENSION}"))
            .display()
            .to_string()
    };
    let command = |table: &str, threads: &str| {
        format!(
            "{} generate {table} --out {} --rule {} --threads {threads}{}{}",
            options.dtz50,
            options.out,
            options.rule,
            if options.thorough_orders {
                " --thorough-orders"
            } else {
                ""
            },
            options
                .work_dir
                .as_ref()
                .map(|dir| format!(" --work-dir {dir}"))
                .unwrap_or_default()
        )
    };
    let mut text = format!(
        "# {} tables for {format}, written by `dtz50 plan`: one job per table, its\n\
         # inputs the files of its sub-tables. Each job writes its file atomically,\n\
         # so a killed run started again goes on where it stopped.\n",
        jobs.len()
    );
    let all: Vec<String> = jobs.iter().map(|j| file(&j.material)).collect();
    match format {
        PlanFormat::Ninja => {
            text += &format!(
                "\nrule generate\n  command = {}\n  description = generate $table\n",
                command("$table", &options.threads.to_string())
            );
            for job in jobs {
                let inputs: Vec<String> = job.inputs.iter().map(&file).collect();
                text += &format!(
                    "\n# memory: {} MiB\nbuild {}: generate{}\n  table = {}\n",
                    mib(job.memory),
                    file(&job.material),
                    if inputs.is_empty() {
                        String::new()
                    } else {
                        format!(" | {}", inputs.join(" "))
                    },
                    job.material
                );
            }
            text += &format!("\nbuild all: phony {}\ndefault all\n", all.join(" "));
        }
        PlanFormat::Make => {
            text += &format!(
                "\n.PHONY: all\nall: {}\n\n.DELETE_ON_ERROR:\n",
                all.join(" ")
            );
            for job in jobs {
                let inputs: Vec<String> = job.inputs.iter().map(&file).collect();
                text += &format!(
                    "\n# memory: {} MiB\n{}:{}\n\t{}\n",
                    mib(job.memory),
                    file(&job.material),
                    inputs.iter().map(|i| format!(" {i}")).collect::<String>(),
                    command(&job.material.to_string(), &options.threads.to_string())
                );
            }
        }
        PlanFormat::Snakemake => {
            let quoted = |items: &[String]| {
                items
                    .iter()
                    .map(|i| format!("\"{i}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            // `all` only gathers the files: on a cluster it runs where
            // Snakemake runs, not as a job of its own.
            text += &format!(
                "\nlocalrules: all\n\nrule all:\n    input: {}\n",
                quoted(&all)
            );
            for job in jobs {
                let inputs: Vec<String> = job.inputs.iter().map(&file).collect();
                text += &format!(
                    "\nrule {}:\n{}    output: \"{}\"\n    threads: {}\n    resources:\n        mem_mb={}\n    shell: \"{}\"\n",
                    job.material,
                    if inputs.is_empty() {
                        String::new()
                    } else {
                        format!("    input: {}\n", quoted(&inputs))
                    },
                    file(&job.material),
                    options.threads,
                    mib(job.memory),
                    command(&job.material.to_string(), "{threads}")
                );
            }
        }
    }
    Ok(text)
}

/// Whole MiB, rounded up.
fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

/// Refuse text that one of the engines would read as syntax.
fn check_quotable(what: &'static str, text: &str) -> Result<(), PlanError> {
    let bad = |c: char| c.is_whitespace() || "\"'\\$:#%{}".contains(c);
    if text.is_empty() || text.contains(bad) {
        return Err(PlanError::Unquotable {
            what,
            text: text.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> PlanOptions {
        PlanOptions {
            dtz50: "/opt/bin/dtz50".into(),
            out: "tables".into(),
            rule: Rule::Fifty,
            thorough_orders: false,
            threads: 1,
            work_dir: None,
        }
    }

    #[test]
    fn every_job_comes_after_its_inputs() {
        let jobs = jobs(&Material::all_up_to(4));
        assert_eq!(jobs.len(), 35);
        for (i, job) in jobs.iter().enumerate() {
            for input in &job.inputs {
                let at = jobs.iter().position(|j| j.material == *input);
                assert!(
                    at.is_some_and(|at| at < i),
                    "{} before {input}",
                    job.material
                );
            }
        }
        let krpvk = jobs
            .iter()
            .find(|j| j.material.to_string() == "KRPvK")
            .expect("listed");
        let names: Vec<String> = krpvk.inputs.iter().map(|m| m.to_string()).collect();
        assert_eq!(names, ["KPvK", "KRvK", "KRNvK", "KRBvK", "KRRvK", "KQRvK"]);
    }

    #[test]
    fn memory_counts_five_bytes_a_position_and_64_mib() {
        let estimate = |name: &str| memory_estimate(name.parse().expect("material"));
        // 462 king pairs × 64 squares.
        assert_eq!(estimate("KQvK"), 462 * 64 * 5 + (64 << 20));
        // The rooks' squares: 2,080 sorted pairs, not 64 × 64.
        assert_eq!(estimate("KRRvK"), 462 * 2080 * 5 + (64 << 20));
        // KRNvKNN fits a 24 GiB machine.
        assert_eq!(estimate("KRNvKNN"), 462 * 64 * 64 * 2080 * 5 + (64 << 20));
        assert!(estimate("KRNvKNN") < 20 << 30);
    }

    #[test]
    fn each_format_names_every_job_with_its_inputs() {
        let jobs = jobs(&["KQvK".parse().expect("material")]);
        let ninja = render(&jobs, PlanFormat::Ninja, &options()).expect("renders");
        assert!(ninja.contains(
            "rule generate\n  command = /opt/bin/dtz50 generate $table --out tables --rule 50 --threads 1\n"
        ));
        assert!(ninja.contains("build tables/KQvK.dtz50: generate\n  table = KQvK\n"));
        let make = render(&jobs, PlanFormat::Make, &options()).expect("renders");
        assert!(make.contains(
            "tables/KQvK.dtz50:\n\t/opt/bin/dtz50 generate KQvK --out tables --rule 50 --threads 1\n"
        ));
        let snake = render(&jobs, PlanFormat::Snakemake, &options()).expect("renders");
        assert!(
            snake.contains("\nlocalrules: all\n\nrule all:\n    input: \"tables/KQvK.dtz50\"\n")
        );
        assert!(snake.contains(
            "rule KQvK:\n    output: \"tables/KQvK.dtz50\"\n    threads: 1\n    resources:\n        mem_mb=65\n    shell: \"/opt/bin/dtz50 generate KQvK --out tables --rule 50 --threads {threads}\"\n"
        ));
    }

    #[test]
    fn jobs_pass_on_the_thorough_order_search() {
        let jobs = jobs(&["KQvK".parse().expect("material")]);
        let thorough = PlanOptions {
            thorough_orders: true,
            ..options()
        };
        let make = render(&jobs, PlanFormat::Make, &thorough).expect("renders");
        assert!(make.contains(
            "\t/opt/bin/dtz50 generate KQvK --out tables --rule 50 --threads 1 --thorough-orders\n"
        ));
    }

    #[test]
    fn jobs_pass_on_the_work_directory() {
        let jobs = jobs(&["KQvK".parse().expect("material")]);
        let working = PlanOptions {
            work_dir: Some("/scratch/dtz50".into()),
            ..options()
        };
        let ninja = render(&jobs, PlanFormat::Ninja, &working).expect("renders");
        assert!(ninja.contains(
            "  command = /opt/bin/dtz50 generate $table --out tables --rule 50 --threads 1 --work-dir /scratch/dtz50\n"
        ));
        let spaced = PlanOptions {
            work_dir: Some("my work".into()),
            ..options()
        };
        let err = render(&jobs, PlanFormat::Make, &spaced).expect_err("refused");
        assert!(
            err.to_string()
                .starts_with("--work-dir 'my work' holds a character"),
            "{err}"
        );
    }

    #[test]
    fn paths_the_engines_would_misread_are_refused() {
        let jobs = jobs(&["KQvK".parse().expect("material")]);
        let mut spaced = options();
        spaced.out = "my tables".into();
        let err = render(&jobs, PlanFormat::Ninja, &spaced).expect_err("refused");
        assert_eq!(
            err.to_string(),
            "--out 'my tables' holds a character the plan cannot quote (whitespace, quotes, \\, $, :, #, % or braces)"
        );
    }
}
