//! Carries each op's doc comment (its formula, derivative line and `>>>` example, written once
//! beside the op in `ferrotape-autodiff/src/ops/`) into the Python docstring of the binding row
//! that exposes it, and lists the ops whose body records a derivative on the tape.
//!
//! Writes `$OUT_DIR/op_docs.rs`: the macro `op_doc!(name)` (the doc comment of `ops::name` as a
//! string literal) and `RECORDING_OPS`. Reading the sources keeps the op declaration the one
//! place an op is written; a new op needs nothing here.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

struct Op {
    name: String,
    doc: String,
    /// Whether its body calls `record`, and the TensorFlow op name it records where that is a
    /// literal (`record("Exp", ...)`).
    records: Option<Option<String>>,
}

fn main() {
    // Read at run time, not with `env!`: a build script compiled in another checkout (a target
    // directory copied between worktrees) must still read this checkout's ops.
    let manifest = env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let ops = Path::new(&manifest).join("../ferrotape-autodiff/src/ops");
    println!("cargo:rerun-if-changed={}", ops.display());
    let mut files: Vec<_> = fs::read_dir(&ops)
        .expect("ferrotape-autodiff/src/ops is readable")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut found = Vec::new();
    for file in files {
        scan(
            &fs::read_to_string(&file).expect("an ops source file"),
            &mut found,
        );
    }
    let out = Path::new(&env::var("OUT_DIR").expect("OUT_DIR")).join("op_docs.rs");
    fs::write(out, render(&found)).expect("OUT_DIR is writable");
}

/// Every top-level `pub fn` with its `///` lines and whether its body calls `record`.
///
/// An op's example is Python, fenced as ```` ```python ```` so that rustdoc and clippy read it
/// as code; the fence lines are dropped, leaving the `>>>` lines a Python docstring expects.
fn scan(source: &str, found: &mut Vec<Op>) {
    let mut doc: Vec<&str> = Vec::new();
    let mut in_python = false;
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        if let Some(text) = line.strip_prefix("///") {
            let text = text.strip_prefix(' ').unwrap_or(text);
            match text {
                "```python" => in_python = true,
                "```" if in_python => in_python = false,
                _ => doc.push(text),
            }
            continue;
        }
        if line.starts_with("#[") {
            continue; // attributes between the doc comment and the function
        }
        if let Some(rest) = line.strip_prefix("pub fn ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let mut body = String::new();
            for line in lines.by_ref() {
                body.push_str(line);
                if line == "}" {
                    break;
                }
            }
            let records = body
                .find("record(")
                .map(|at| recorded_name(&body[at + 7..]));
            let doc = doc.join("\n");
            found.push(Op { name, doc, records });
        }
        doc.clear();
    }
}

/// The string literal a `record(` call starts with, if it starts with one.
fn recorded_name(args: &str) -> Option<String> {
    let rest = args.trim_start().strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

fn render(found: &[Op]) -> String {
    let mut s = String::from("/// The doc comment of `ferrotape_autodiff::ops::$name`.\n");
    s.push_str("macro_rules! op_doc {\n");
    for op in found {
        writeln!(s, "    ({}) => {{ {:?} }};", op.name, op.doc).unwrap();
    }
    s.push_str(
        "}\n\n/// The ops of `ferrotape_autodiff::ops` that record a derivative, each with the\n",
    );
    s.push_str("/// TensorFlow op name it records where its source states it literally.\n");
    s.push_str("pub const RECORDING_OPS: &[(&str, Option<&str>)] = &[\n");
    for op in found {
        if let Some(recorded) = &op.records {
            writeln!(s, "    ({:?}, {:?}),", op.name, recorded).unwrap();
        }
    }
    s.push_str("];\n");
    s
}
