//! The architecture, checked rather than described: inside each crate the
//! modules depend on each other one way, with no circle.
//!
//! A module is a file (`src/foo.rs`, `src/foo/mod.rs`, `src/foo/bar.rs` is
//! `foo::bar`); it depends on another when its code (not its comments, not
//! its `#[cfg(test)]` tail) names it through `crate::` or `super::`, or
//! names a child of its own (`pub use run::go`). A module may use its
//! ancestors' items (a `mod.rs` holds what its children share): that is
//! not counted.
//!
//! The circles found when this test was written are listed in [`KNOWN`],
//! each to be cut: a new circle fails the test, and so does a listed one
//! that is gone (take it off the list, which only shrinks).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Circles that exist, per crate, each as its modules in sorted order: the
/// command line's output files, commands and pages, tied by the names of
/// the files a run writes; the model's format, its checks and the model
/// they build.
const KNOWN: &[(&str, &[&str])] = &[
    (
        "cli",
        &[
            "attempts_file",
            "margin_cmd",
            "outdir",
            "output",
            "sweep_charts",
            "sweep_cmd",
            "sweep_page",
        ],
    ),
    ("model", &["model", "spec", "validate"]),
];

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The module a file under `src` is, as its path from the crate root
/// (empty for `lib.rs` or `main.rs`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !(matches!(stem, "mod") || (parts.is_empty() && matches!(stem, "lib" | "main"))) {
        parts.push(stem.to_string());
    }
    parts
}

/// The code of a file that counts: no comments, nothing from its
/// `#[cfg(test)]` on.
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        out.push_str(line.split(" //").next().unwrap());
        out.push('\n');
    }
    out
}

/// The paths named after `prefix` (`crate::a::b`, `crate::{a, b::c}`), as
/// lists of identifiers.
fn named_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        // Inside an identifier, or the rest of a chain (`super::super::`).
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                out.push(path_idents(item.trim()));
            }
        } else {
            out.push(path_idents(rest));
        }
    }
    out
}

/// `a::b::C` at the start of `s`, as identifiers.
fn path_idents(s: &str) -> Vec<String> {
    let mut idents = Vec::new();
    let mut s = s;
    loop {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        if end == 0 {
            break;
        }
        idents.push(s[..end].to_string());
        match s[end..].strip_prefix("::") {
            Some(next) => s = next,
            None => break,
        }
    }
    idents
}

/// The longest known module that `path` starts with.
fn known_prefix(modules: &BTreeSet<Vec<String>>, path: &[String]) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
}

/// Each circle (a strongly connected set of two or more modules) of one
/// crate, its modules joined by `::` and sorted.
fn circles(src: &Path) -> Vec<Vec<String>> {
    let files = rust_files(src);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in &files {
        let from = module_of(src, file);
        let text = code(&std::fs::read_to_string(file).unwrap());
        let mut named: Vec<Vec<String>> = named_after(&text, "crate::");
        // `super::x` in `a::b` is `a::x`, whether `a::b` is `a/b.rs` or
        // `a/b/mod.rs`.
        let parent: Vec<String> = from[..from.len().saturating_sub(1)].to_vec();
        for mut path in named_after(&text, "super::") {
            let mut base = parent.clone();
            while path.first().is_some_and(|p| p == "super") {
                path.remove(0);
                base.pop();
            }
            named.push(base.into_iter().chain(path).collect());
        }
        // A child named relatively (`pub use run::go`, `run::go()`).
        for child in modules
            .iter()
            .filter(|m| m.len() == from.len() + 1 && m.starts_with(&from))
        {
            let name = format!("{}::", child.last().unwrap());
            if !named_after(&text, &name).is_empty() {
                named.push(child.clone());
            }
        }
        for path in named {
            let Some(to) = known_prefix(&modules, &path) else {
                continue;
            };
            // A module may use its ancestors' items (a `mod.rs` holds what
            // its children share).
            if from.starts_with(&to) {
                continue;
            }
            edges.entry(from.clone()).or_default().insert(to);
        }
    }
    strongly_connected(&modules, &edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
            names.sort();
            names
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Tarjan's strongly connected components.
fn strongly_connected(
    nodes: &BTreeSet<Vec<String>>,
    edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
) -> Vec<Vec<Vec<String>>> {
    struct State<'a> {
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<Vec<String>, usize>,
        low: BTreeMap<Vec<String>, usize>,
        stack: Vec<Vec<String>>,
        on_stack: BTreeSet<Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    fn visit(s: &mut State, v: &Vec<String>) {
        let i = s.index.len();
        s.index.insert(v.clone(), i);
        s.low.insert(v.clone(), i);
        s.stack.push(v.clone());
        s.on_stack.insert(v.clone());
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v.clone(), low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v.clone(), low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(&w);
                let done = &w == v;
                component.push(w);
                if done {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn modules_inside_each_crate_depend_one_way() {
    let crates = common::root().join("crates");
    let mut names: Vec<String> = std::fs::read_dir(&crates)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| crates.join(n).join("src").is_dir())
        .collect();
    names.sort();
    assert!(names.len() >= 8, "crates not found: {names:?}");
    let mut found: BTreeSet<(String, Vec<String>)> = BTreeSet::new();
    for name in &names {
        for circle in circles(&crates.join(name).join("src")) {
            found.insert((name.clone(), circle));
        }
    }
    let known: BTreeSet<(String, Vec<String>)> = KNOWN
        .iter()
        .map(|(c, m)| (c.to_string(), m.iter().map(|s| s.to_string()).collect()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "module circles not listed in KNOWN (cut them): {new:?}\n\
         listed circles that are gone (take them off KNOWN): {gone:?}"
    );
}

/// The checker finds a circle it is shown, and none where there is none.
#[test]
fn the_circle_finder_finds_circles() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("fast")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a; mod b; mod c; mod fast;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::{b::X, c};\n").unwrap();
    std::fs::write(
        src.join("b.rs"),
        "// crate::c in a comment\nuse crate::a::Y;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("c.rs"),
        "pub fn f() {}\n#[cfg(test)]\nmod tests { use crate::a; }\n",
    )
    .unwrap();
    std::fs::write(src.join("fast/mod.rs"), "mod run; pub use run::go;\n").unwrap();
    std::fs::write(
        src.join("fast/run.rs"),
        "use super::Thing; use super::super::c;\n",
    )
    .unwrap();
    assert_eq!(circles(src), vec![vec!["a".to_string(), "b".to_string()]]);
    // fast::run names c; c naming fast closes a circle through both.
    std::fs::write(src.join("c.rs"), "use crate::fast::go;\n").unwrap();
    assert_eq!(
        circles(src),
        vec![
            vec!["a".to_string(), "b".to_string()],
            vec!["c".to_string(), "fast".to_string(), "fast::run".to_string()]
        ]
    );
}
