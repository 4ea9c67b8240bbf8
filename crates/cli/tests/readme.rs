//! The README is the repository's front door. Its links, and those of docs/
//! and the notebooks' README, lead to files in the repository; its
//! quickstart, taken from README.md itself, runs as written and shows what it
//! says; its first command leaves the work tree as it was; and CI runs its
//! install and first command as written.

mod common;

use common::{assert_ok, assert_same_files, csv_rows, files, read, root, stormsim_in};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

// ---- Links -----------------------------------------------------------------

/// The Markdown files whose links are checked: the README, every `.md` under
/// docs/, and the notebooks' README; relative to the repository's root.
fn markdown_files() -> Vec<PathBuf> {
    let mut found = vec![
        PathBuf::from("README.md"),
        PathBuf::from("notebooks/README.md"),
    ];
    let mut dirs = vec![PathBuf::from("docs")];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(root().join(&dir))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = dir.join(entry.expect("a folder entry").file_name());
            if root().join(&path).is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The destination at the start of `s`, the text after a link's `](` or a
/// reference definition's `]:`: `<with spaces>`, or up to a space or `)`.
fn destination(s: &str) -> String {
    match s.strip_prefix('<') {
        Some(rest) => rest.split('>').next().unwrap_or_default().to_string(),
        None => s
            .split(|c: char| c.is_whitespace() || c == ')')
            .next()
            .unwrap_or_default()
            .to_string(),
    }
}

/// The destinations of a Markdown text's links and images (`[text](target)`,
/// `![alt](target "title")`, `[label]: target`), outside fenced code blocks
/// and code spans.
fn link_targets(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let prose: Vec<&str> = markdown
        .lines()
        .map(|line| {
            let fence =
                line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
            if fence {
                fenced = !fenced;
            }
            if fence || fenced {
                ""
            } else {
                line
            }
        })
        .collect();
    let mut targets = Vec::new();
    // A code span ends in its paragraph: pair the backticks per paragraph.
    for paragraph in prose.join("\n").split("\n\n") {
        let text: Vec<&str> = paragraph.split('`').step_by(2).collect();
        let text = text.join(" ");
        for line in text.lines() {
            let definition = line.trim_start().strip_prefix('[').and_then(|rest| {
                let (label, after) = rest.split_once(']')?;
                (!label.is_empty()).then_some(after.strip_prefix(':')?)
            });
            if let Some(target) = definition {
                targets.push(destination(target.trim_start()));
            }
        }
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            targets.push(destination(rest));
        }
    }
    targets
}

/// What is wrong with a link to `target` from the file `from` (relative to
/// the repository's root), if anything: web and mail links are not followed,
/// a link to a heading of the same file is fine, anything else must be a
/// relative path to a file or folder inside the repository (its `#anchor`
/// aside).
fn link_problem(from: &Path, target: &str) -> Option<&'static str> {
    if ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| target.starts_with(scheme))
        || target.starts_with('#')
    {
        return None;
    }
    let path = target.split(['#', '?']).next().unwrap_or_default();
    if path.is_empty() {
        return Some("an empty link");
    }
    if path.contains(':') {
        return Some("not a relative path");
    }
    let mut resolved = from.parent().unwrap_or(Path::new("")).to_path_buf();
    for part in Path::new(path).components() {
        match part {
            Component::Normal(name) => resolved.push(name),
            Component::CurDir => {}
            Component::ParentDir if resolved.pop() => {}
            Component::ParentDir => return Some("points outside the repository"),
            Component::RootDir | Component::Prefix(_) => {
                return Some("an absolute path (links are relative to their file)")
            }
        }
    }
    (!root().join(&resolved).exists()).then_some("no such file or folder in the repository")
}

/// Every broken link of one Markdown file, as `file: target: why`.
fn link_problems(from: &Path, markdown: &str) -> Vec<String> {
    link_targets(markdown)
        .iter()
        .filter_map(|t| {
            Some(format!(
                "{}: {t}: {}",
                from.display(),
                link_problem(from, t)?
            ))
        })
        .collect()
}

#[test]
fn the_link_check_finds_missing_and_outside_targets_and_skips_code() {
    let markdown = "[ok](README.md) ![chart](outputs/catalog-incident/timeline.svg \"a title\")\n\
        [a heading](docs/outputs.md#wall-clock-figures) [web](https://example.com/none) [here](#top)\n\
        [gone](docs/nothing.md) and [`code`](../shared/bench/x.md), a span `[no](link.md)`\n\
        [spread over\n\
        two lines](<models/no such.json>)\n\
        \n\
        ```bash\n\
        [fenced](fenced.md)\n\
        ```\n\
        [label]: notebooks/none.ipynb\n";
    assert_eq!(
        link_problems(Path::new("README.md"), markdown),
        [
            "README.md: docs/nothing.md: no such file or folder in the repository",
            "README.md: ../shared/bench/x.md: points outside the repository",
            "README.md: models/no such.json: no such file or folder in the repository",
            "README.md: notebooks/none.ipynb: no such file or folder in the repository",
        ]
    );
    // Relative to the linking file's folder.
    assert_eq!(
        link_problems(
            Path::new("docs/x.md"),
            "[up](../README.md) [here](outputs.md) [no](README.md)"
        ),
        ["docs/x.md: README.md: no such file or folder in the repository"]
    );
    assert_eq!(
        link_problems(
            Path::new("docs/x.md"),
            "[root](/README.md) [file](file:///etc/passwd)"
        ),
        [
            "docs/x.md: /README.md: an absolute path (links are relative to their file)",
            "docs/x.md: file:///etc/passwd: not a relative path",
        ]
    );
}

#[test]
fn the_readmes_and_the_docs_links_resolve_inside_the_repository() {
    let files = markdown_files();
    assert!(files.len() > 2, "no Markdown under docs/: {files:?}");
    let readme = link_targets(&read(&root().join("README.md")));
    assert!(
        readme.iter().any(|t| t.starts_with("docs/")),
        "no link to docs/ found in README.md: {readme:?}"
    );
    let problems: Vec<String> = files
        .iter()
        .flat_map(|f| link_problems(f, &read(&root().join(f))))
        .collect();
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

// ---- The README's commands -------------------------------------------------

fn readme() -> String {
    read(&root().join("README.md"))
}

/// The lines of the README's section `## title`, up to the next one.
fn section<'a>(readme: &'a str, title: &str) -> Vec<&'a str> {
    let heading = format!("## {title}");
    let mut lines = readme.lines().skip_while(|l| *l != heading);
    assert!(
        lines.next().is_some(),
        "README.md has no section {heading:?}"
    );
    lines.take_while(|l| !l.starts_with("## ")).collect()
}

/// A fenced block of a section: its language, the prose since the previous
/// block, and its lines.
struct Block<'a> {
    lang: &'a str,
    before: String,
    lines: Vec<&'a str>,
}

fn blocks<'a>(section: &[&'a str]) -> Vec<Block<'a>> {
    let mut found = Vec::new();
    let mut before = Vec::new();
    let mut lines = section.iter();
    while let Some(line) = lines.next() {
        match line.strip_prefix("```") {
            Some(lang) => found.push(Block {
                lang,
                before: std::mem::take(&mut before).join(" "),
                lines: lines
                    .by_ref()
                    .take_while(|l| !l.starts_with("```"))
                    .copied()
                    .collect(),
            }),
            None => before.push(*line),
        }
    }
    found
}

/// A command line of a bash block, split into its words and its comment.
struct CommandLine {
    words: Vec<String>,
    comment: String,
}

/// Splits a command line as the shell does, for the little shell the
/// README's commands use (words, quotes, a `#` comment); anything else
/// (variables, globs, pipes, redirections) is refused rather than misread.
fn command_line(line: &str) -> CommandLine {
    let (mut words, mut word, mut quote) = (Vec::new(), None::<String>, None);
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '$' | '`' | '\\') => panic!("{line:?}: shell expansion in quotes"),
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, '#') if word.is_none() => {
                words.extend(word.take());
                return CommandLine {
                    words,
                    comment: line[at + 1..].trim().to_string(),
                };
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (
                None,
                '$' | '`' | '\\' | '|' | '&' | ';' | '<' | '>' | '(' | ')' | '*' | '?' | '[' | '~',
            ) => {
                panic!("{line:?}: shell syntax this test does not run ({c:?})")
            }
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "{line:?}: an unclosed quote");
    words.extend(word);
    CommandLine {
        words,
        comment: String::new(),
    }
}

/// The command lines of a section's bash blocks.
fn commands(section: &[&str]) -> Vec<CommandLine> {
    blocks(section)
        .iter()
        .filter(|b| b.lang == "bash")
        .flat_map(|b| b.lines.iter().filter(|l| !l.trim().is_empty()))
        .map(|l| command_line(l))
        .collect()
}

/// The first `"quoted"` word of a comment: what the README says a command
/// shows.
fn claim(comment: &str) -> Option<&str> {
    comment.split('"').nth(1)
}

/// The words of the README's first command, the main job's: the first line
/// of "Two commands", `cargo run --release -- ARGS`.
fn first_command(readme: &str) -> Vec<String> {
    let commands = commands(&section(readme, "Two commands"));
    let first = commands.first().expect("a command under \"Two commands\"");
    assert!(
        first
            .words
            .starts_with(&["cargo", "run", "--release", "--"].map(String::from)),
        "the first command is no longer `cargo run --release -- ARGS`: update this test"
    );
    first.words[4..].to_vec()
}

#[test]
fn the_command_line_splitter_reads_words_quotes_and_comments() {
    let line =
        command_line("stormsim run a.json --set 'x[y].z=1' \"b c\"   # \"recovered\", says # it");
    assert_eq!(
        line.words,
        ["stormsim", "run", "a.json", "--set", "x[y].z=1", "b c"]
    );
    assert_eq!(line.comment, "\"recovered\", says # it");
    assert_eq!(claim(&line.comment), Some("recovered"));
    assert_eq!(command_line("a b#c").words, ["a", "b#c"]);
    for refused in ["a $HOME", "a | b", "a > f", "a *.json", "a 'open"] {
        assert!(
            std::panic::catch_unwind(|| command_line(refused)).is_err(),
            "{refused:?} was accepted"
        );
    }
}

/// Runs a `stormsim ...` line of the quickstart in `dir` with the binary.
fn run_line(dir: &Path, line: &CommandLine) -> std::process::Output {
    let out = stormsim_in(dir, &line.words[1..], &[]);
    assert!(
        out.status.success(),
        "`{}` failed: {}",
        line.words.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The folder a quickstart `run` line writes: its `--out`, or
/// `outputs/<model name>/`.
fn run_folder(dir: &Path, words: &[String]) -> PathBuf {
    match words.iter().position(|w| w == "--out") {
        Some(at) => dir.join(&words[at + 1]),
        None => {
            let model: Value = serde_json::from_str(&read(&dir.join(&words[2]))).unwrap();
            dir.join("outputs")
                .join(model["name"].as_str().expect("a model name"))
        }
    }
}

/// What the quickstart says of its sweep, word for word, and what that means
/// in aggregate.csv: per number of attempts, the outcome that all three
/// replications had.
const SWEEP_CLAIM: &str = "One attempt recovers in all three replications; two or three \
                           attempts are metastable in all three";
const SWEEP_OUTCOMES: [(&str, &str); 3] =
    [("1", "recovered"), ("2", "metastable"), ("3", "metastable")];
const SWEEP_REPLICATIONS: &str = "3";

/// The sweep's aggregate.csv against [`SWEEP_CLAIM`].
fn assert_sweep_claim(dir: &Path, sweep_file: &str, quickstart: &str) {
    let prose = quickstart.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        prose.contains(SWEEP_CLAIM),
        "the quickstart no longer says {SWEEP_CLAIM:?}: update SWEEP_CLAIM and SWEEP_OUTCOMES"
    );
    let sweep: Value = serde_json::from_str(&read(&dir.join(sweep_file))).unwrap();
    let axis = sweep["axes"][0]["name"]
        .as_str()
        .expect("the sweep's axis name");
    let out = dir
        .join("outputs")
        .join(sweep["name"].as_str().expect("a sweep name"));
    let rows = csv_rows(&read(&out.join("aggregate.csv")));
    let points: Vec<&str> = rows.iter().map(|r| r[axis].as_str()).collect();
    assert_eq!(
        points,
        SWEEP_OUTCOMES.map(|(attempts, _)| attempts),
        "the sweep's points"
    );
    for (row, (attempts, outcome)) in rows.iter().zip(SWEEP_OUTCOMES) {
        assert_eq!(
            row["replications"], SWEEP_REPLICATIONS,
            "{axis} = {attempts}"
        );
        assert_eq!(
            row[&format!("outcome.{outcome}")],
            SWEEP_REPLICATIONS,
            "{axis} = {attempts}: not {outcome} in all replications: {row:?}"
        );
    }
}

/// The quickstart as a reader follows it: each JSON block saved under the
/// name the text before it gives, each command run in that folder with the
/// freshly built binary (but `xdg-open`, which opens a browser: the page it
/// names must exist), and what the README says each shows checked against
/// the files written.
#[test]
fn the_quickstart_runs_as_written_and_shows_what_it_says() {
    let readme = readme();
    let quickstart = section(&readme, "Quickstart");
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    for block in blocks(&quickstart).iter().filter(|b| b.lang == "json") {
        let name = block
            .before
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|span| span.ends_with(".json"))
            .last()
            .unwrap_or_else(|| panic!("no `NAME.json` before the block: {:?}", block.before));
        std::fs::write(dir.join(name), block.lines.join("\n")).unwrap();
    }
    let lines = commands(&quickstart);
    let mut checked = BTreeSet::new();
    for line in &lines {
        let words: Vec<&str> = line.words.iter().map(String::as_str).collect();
        match words[..] {
            ["xdg-open", page] => assert!(dir.join(page).is_file(), "{page} was not written"),
            ["stormsim", "check", ..] => {
                let out = run_line(dir, line);
                let said = claim(&line.comment).expect("the check line's \"claim\"");
                let shown = String::from_utf8_lossy(&out.stdout);
                assert!(shown.contains(said), "check does not say {said:?}: {shown}");
            }
            ["stormsim", "run", ..] => {
                run_line(dir, line);
                let said = claim(&line.comment).expect("each run line's \"verdict\"");
                let summary = read(&run_folder(dir, &line.words).join("summary.csv"));
                for row in csv_rows(&summary) {
                    assert_eq!(
                        row["outcome"],
                        said,
                        "`{}`: {}",
                        words.join(" "),
                        row["variant"]
                    );
                }
            }
            ["stormsim", "sweep", sweep_file] => {
                run_line(dir, line);
                let (folder, listed) = line
                    .comment
                    .split_once(": ")
                    .expect("the sweep line's comment lists its files: `DIR/: a, b`");
                for file in listed.split(", ") {
                    assert!(
                        dir.join(folder).join(file).is_file(),
                        "{folder}{file} was not written"
                    );
                }
                assert_sweep_claim(dir, sweep_file, &quickstart.join("\n"));
            }
            _ => panic!("a quickstart command this test does not know how to check: {words:?}"),
        }
        checked.insert(match words[..] {
            ["stormsim", command, ..] => format!("stormsim {command}"),
            _ => words[0].to_string(),
        });
    }
    assert_eq!(
        checked.into_iter().collect::<Vec<_>>(),
        [
            "stormsim check",
            "stormsim run",
            "stormsim sweep",
            "xdg-open"
        ],
        "the kinds of command the quickstart runs"
    );
}

/// Running the README's first command in a fresh clone writes what the
/// repository holds, byte for byte, and nothing else: no wall-clock figure
/// or any other difference between two runs may reach committed outputs.
/// The same binary, the same arguments, in a copy of models/.
#[test]
fn first_command_leaves_the_work_tree_clean() {
    let args = first_command(&readme());
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    for (path, bytes) in files(&root().join("models")) {
        let path = dir.join("models").join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let before = files(dir);
    assert_ok(&stormsim_in(dir, &args, &[]));
    let after = files(dir);
    let outputs = Path::new("outputs");
    for (path, bytes) in &after {
        assert!(
            path.starts_with(outputs) || before.get(path) == Some(bytes),
            "the first command wrote {}",
            path.display()
        );
    }
    let written: BTreeSet<&Path> = after
        .keys()
        .filter_map(|p| {
            Some(
                p.strip_prefix(outputs)
                    .ok()?
                    .components()
                    .next()?
                    .as_os_str(),
            )
        })
        .map(Path::new)
        .collect();
    assert!(
        !written.is_empty(),
        "the first command wrote nothing under outputs/"
    );
    for folder in written {
        assert_same_files(
            &files(&root().join(outputs).join(folder)),
            &files(&dir.join(outputs).join(folder)),
            &format!(
                "outputs/{} as committed and as the first command writes it",
                folder.display()
            ),
        );
    }
}

/// `.ci/run` runs the README's install and main commands as written (the
/// quickstart runs above): a README whose commands change changes CI's.
#[test]
fn ci_runs_the_readmes_install_and_two_commands() {
    let readme = readme();
    let ci = read(&root().join(".ci/run"));
    let ci_lines: Vec<&str> = ci
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    for title in ["Install", "Two commands"] {
        let lines = commands(&section(&readme, title));
        assert!(!lines.is_empty(), "no command under {title:?}");
        for line in lines {
            let command = line.words.join(" ");
            assert!(
                ci_lines.iter().any(|l| l.starts_with(&command)),
                ".ci/run does not run the README's `{command}`"
            );
        }
    }
}
