//! The graph as Graphviz DOT (`--dump-stg FILE.dot`), laid out like Figure 1: one cluster
//! per time point, a node per box with its id, rule, predicate, time and forget time, and
//! the facts it holds; p-edges solid and n-edges dashed, both labelled with the body
//! position they fill (n-edges as `¬j`). Nodes removed by MIN DATALOG are drawn dotted and
//! name the node whose query contains theirs.

use std::fmt::Write as _;

use super::{Graph, NodeRecord};
use stgflow_lang::ir::Program;

/// Renders `graph` (of `program`) as DOT; the rules are listed in a comment on top.
pub fn to_dot(graph: &Graph, program: &Program) -> String {
    let mut text =
        String::from("// Streaming Trigger Graph (Algorithm 4); nodes in creation order.\n");
    for (r, rule) in program.rules.iter().enumerate() {
        let _ = writeln!(text, "// r{r}: {}", program.display_rule(rule));
    }
    text.push_str("digraph stg {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n");
    let mut times: Vec<u64> = graph.nodes.iter().map(|n| n.time).collect();
    times.dedup();
    for time in times {
        let _ = writeln!(
            text,
            "  subgraph cluster_t{time} {{\n    label=\"t = {time}\";"
        );
        for node in graph.nodes.iter().filter(|n| n.time == time) {
            let _ = writeln!(text, "    {}", node_line(node, program));
        }
        text.push_str("  }\n");
    }
    for node in &graph.nodes {
        for (position, from) in &node.p_edges {
            let _ = writeln!(text, "  v{from} -> v{} [label=\"{position}\"];", node.id);
        }
        for (position, sources) in &node.n_edges {
            if sources.is_empty() {
                let _ = writeln!(
                    text,
                    "  none_{id}_{position} [shape=plaintext, label=\"∅\"];\n  none_{id}_{position} -> v{id} [label=\"¬{position}\", style=dashed];",
                    id = node.id
                );
            }
            for from in sources {
                let _ = writeln!(
                    text,
                    "  v{from} -> v{} [label=\"¬{position}\", style=dashed];",
                    node.id
                );
            }
        }
    }
    text.push_str("}\n");
    text
}

fn node_line(node: &NodeRecord, program: &Program) -> String {
    let rule = node
        .rule
        .map_or_else(|| "input".to_owned(), |r| format!("r{r}"));
    let pred = program.pred_name(node.pred);
    let facts: Vec<String> = node
        .facts
        .iter()
        .map(|tuple| {
            let mut args: Vec<String> = tuple.iter().map(ToString::to_string).collect();
            args.push(node.time.to_string());
            format!("{pred}({})", args.join(", "))
        })
        .collect();
    let status = match node.removed_by {
        Some(by) => format!("removed by MIN DATALOG (contained in v{by})"),
        None => format!("forget at {}", node.forget_at),
    };
    let label = format!(
        "v{}  {rule}  {pred}\\nt={}  {status}\\n{{{}}}",
        node.id,
        node.time,
        facts.join(", ")
    );
    let style = if node.removed_by.is_some() {
        ", style=dotted"
    } else {
        ""
    };
    format!("v{} [label=\"{}\"{style}];", node.id, escape(&label))
}

/// Escapes quotes for a DOT string (the `\n` line breaks are already escaped).
fn escape(label: &str) -> String {
    label.replace('"', "\\\"")
}
