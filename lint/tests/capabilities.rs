//! The capability view: effective tool sets, approval, dead references,
//! lenient reading, and snapshots of every output format.

#![allow(clippy::unwrap_used)] // test helpers

use objectstack_lint::capabilities::{
    self, Capabilities, CapabilitiesError, DeadKind, Format, Node, RenderOptions, SkillStatus,
    ToolSource, ToolStatus,
};
use objectstack_spec::materialise::ConfirmationReason;
use serde_json::{Map, Value, json};

fn data(name: &str) -> String {
    let path = format!(
        "{}/tests/data/capabilities/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn stack(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

type Caps = Capabilities<'static>;

fn fixture() -> Caps {
    let v: Value = serde_json::from_str(&data("support.json")).unwrap();
    build_caps(&stack(v))
}

fn render(caps: &Caps, format: Format, agent: Option<&str>) -> String {
    capabilities::render(
        caps,
        &RenderOptions {
            format,
            agent: agent.map(str::to_owned),
            expand: false,
        },
    )
    .unwrap()
}

fn render_expanded(caps: &Caps, format: Format, agent: Option<&str>) -> String {
    capabilities::render(
        caps,
        &RenderOptions {
            format,
            agent: agent.map(str::to_owned),
            expand: true,
        },
    )
    .unwrap()
}

/// An agent's whole effective tool set, by name.
fn effective(caps: &Caps, agent: &str) -> Vec<String> {
    let agent = caps.agent(agent).unwrap();
    caps.grants(&agent.skills)
        .expanded()
        .map(|t| caps.tools[t.tool].name.to_string())
        .collect()
}

fn dead(caps: &Caps, agent: &str) -> Vec<(DeadKind, String, String)> {
    caps.dead(&caps.agent(agent).unwrap().skills)
        .map(|d| (d.kind, d.reference.to_owned(), d.path.clone()))
        .collect()
}

#[test]
fn effective_tool_set_expands_wildcards_and_skips_unbound_skills() {
    let caps = fixture();
    // builder (surface build) and retired (inactive) add nothing to an ask agent.
    assert_eq!(
        effective(&caps, "support_desk"),
        [
            "action_case_assign",
            "action_case_escalate",
            "action_close_case",
            "get_record",
            "legacy_lookup",
            "query_records",
            "search_knowledge",
            "summarise_case",
        ]
    );
    assert_eq!(
        effective(&caps, "studio_helper"),
        [
            "describe_object",
            "legacy_lookup",
            "list_objects",
            "search_knowledge",
            "summarise_case"
        ]
    );
    let skill = caps
        .skills
        .iter()
        .find(|s| s.name == "case_handling")
        .unwrap();
    let wildcard = skill.refs.iter().find(|r| r.is_wildcard()).unwrap();
    assert_eq!(wildcard.text(), "action_case_*");
    let expanded: Vec<&str> = caps
        .resolves(wildcard)
        .map(|i| caps.tools[i].name.as_ref())
        .collect();
    // case_merge is exposed but UI-only: it never joins the family.
    assert_eq!(expanded, ["action_case_assign", "action_case_escalate"]);
    let agent = caps.agent("support_desk").unwrap();
    let via = caps
        .grants(&agent.skills)
        .expanded()
        .next()
        .unwrap()
        .granted_by;
    assert_eq!(via.len(), 1);
    assert_eq!(via[0].reference, "action_case_*");
}

#[test]
fn a_tool_granted_twice_is_listed_once_with_both_grants() {
    let caps = build_caps(&stack(json!({
        "skills": [
            {"name": "a", "tools": ["query_data", "query_*"]},
            {"name": "b", "tools": ["query_data"]}
        ],
        "agents": [{"name": "bot", "skills": ["a", "b"]}]
    })));
    let agent = caps.agent("bot").unwrap();
    assert_eq!(effective(&caps, "bot"), ["query_data", "query_records"]);
    let refs: Vec<(String, String)> = caps
        .grants(&agent.skills)
        .expanded()
        .next()
        .unwrap()
        .granted_by
        .iter()
        .map(|g| {
            (
                caps.skills[g.skill].name.to_string(),
                g.reference.to_owned(),
            )
        })
        .collect();
    assert_eq!(
        refs,
        [
            ("a".to_owned(), "query_data".to_owned()),
            ("a".to_owned(), "query_*".to_owned()),
            ("b".to_owned(), "query_data".to_owned())
        ]
    );
}

#[test]
fn approval_follows_the_backing_action() {
    let exposed = |extra: Value| {
        let mut a = stack(json!({
            "type": "script", "target": "t",
            "ai": {"exposed": true, "description": "Does something worth describing to a model."}
        }));
        for (k, v) in stack(extra) {
            if k == "ai" {
                if let (Some(Value::Object(ai)), Value::Object(more)) = (a.get_mut("ai"), v) {
                    ai.extend(more);
                }
            } else {
                a.insert(k, v);
            }
        }
        Value::Object(a)
    };
    let mut actions = Vec::new();
    for (name, extra) in [
        ("wipe", json!({"mode": "delete"})),
        ("risky", json!({"variant": "danger"})),
        ("asked", json!({"confirmText": "Sure?"})),
        ("flagged", json!({"ai": {"requiresConfirmation": true}})),
        (
            "waived",
            json!({"mode": "delete", "ai": {"requiresConfirmation": false}}),
        ),
        ("plain", json!({})),
        // Bound by `wrapped` below: its raw tool is superseded.
        ("purge", json!({"mode": "delete"})),
    ] {
        let mut a = exposed(extra);
        a["name"] = json!(name);
        actions.push(a);
    }
    let caps = build_caps(&stack(json!({
        "actions": actions,
        "tools": [{"name": "wrapped", "binding": {"type": "action", "name": "purge"}}],
        "skills": [{"name": "s", "tools": ["action_*", "wrapped"]}],
        "agents": [{"name": "bot", "skills": ["s"]}]
    })));
    let approval = |tool: &str| caps.tool(tool).unwrap().approval;
    assert_eq!(
        approval("action_wipe"),
        Some(ConfirmationReason::ModeDelete)
    );
    assert_eq!(
        approval("action_risky"),
        Some(ConfirmationReason::VariantDanger)
    );
    assert_eq!(
        approval("action_asked"),
        Some(ConfirmationReason::ConfirmText)
    );
    assert_eq!(
        approval("action_flagged"),
        Some(ConfirmationReason::AiRequiresConfirmation)
    );
    assert_eq!(approval("action_waived"), None);
    assert_eq!(approval("action_plain"), None);
    // A tool record bound to a destructive action inherits its gate.
    assert_eq!(approval("wrapped"), Some(ConfirmationReason::ModeDelete));
    assert_eq!(caps.tool("wrapped").unwrap().status, ToolStatus::Ready);
    // The raw tool of a bound action is not a tool (ADR-0109 Phase 2).
    assert!(caps.tool("action_purge").is_none());

    // Summarised, the wildcard counts what it hides.
    let json: Value = serde_json::from_str(&render(&caps, Format::Json, Some("bot"))).unwrap();
    let agent = &json["agents"][0];
    assert_eq!(agent["needsApproval"], json!(5));
    assert_eq!(agent["wildcards"][0]["ref"], "action_*");
    assert_eq!(agent["wildcards"][0]["needsApproval"], json!(4));
    assert_eq!(agent["wildcards"][0]["matches"], json!(6));
    assert_eq!(agent["tools"].as_array().unwrap().len(), 1);
    assert_eq!(json["summary"]["needsApproval"], json!(5));
    let json: Value =
        serde_json::from_str(&render_expanded(&caps, Format::Json, Some("bot"))).unwrap();
    let needing: Vec<&str> = json["agents"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["needsApproval"] == json!(true))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        needing,
        [
            "action_asked",
            "action_flagged",
            "action_risky",
            "action_wipe",
            "wrapped"
        ]
    );
    assert_eq!(json["summary"]["needsApproval"], json!(5));
}

#[test]
fn dead_references_of_every_kind() {
    let caps = fixture();
    assert_eq!(
        dead(&caps, "support_desk"),
        [
            (
                DeadKind::ToolUnresolved,
                "triage_case".into(),
                "skills[0].tools[4]".into()
            ),
            (
                DeadKind::ActionNotMaterialised,
                "action_case_merge".into(),
                "skills[0].tools[5]".into()
            ),
            (
                DeadKind::ToolUnresolved,
                "summarize_case".into(),
                "skills[1].tools[3]".into()
            ),
            (
                DeadKind::SkillSurfaceMismatch,
                "builder".into(),
                "agents[0].skills[2]".into()
            ),
            (
                DeadKind::SkillMissing,
                "billing".into(),
                "agents[0].skills[3]".into()
            ),
            (
                DeadKind::SkillInactive,
                "retired".into(),
                "agents[0].skills[4]".into()
            ),
        ]
    );
    let agent = caps.agent("support_desk").unwrap();
    let typo = caps
        .dead(&agent.skills)
        .find(|d| d.reference == "summarize_case")
        .unwrap();
    assert_eq!(typo.suggestion.as_deref(), Some("summarise_case"));
    assert!(typo.message.ends_with("Did you mean \"summarise_case\"?"));
    let statuses: Vec<SkillStatus> = agent.skills.iter().map(|s| s.status).collect();
    assert_eq!(
        statuses,
        [
            SkillStatus::Attached,
            SkillStatus::Attached,
            SkillStatus::SurfaceMismatch,
            SkillStatus::Missing,
            SkillStatus::Inactive
        ]
    );
    // The unattached pseudo-section has the empty wildcard.
    let unattached: Vec<DeadKind> = caps.dead(&caps.unattached).map(|d| d.kind).collect();
    assert_eq!(unattached, [DeadKind::WildcardEmpty]);
    assert_eq!(caps.unattached.len(), 1);
    assert_eq!(caps.unattached[0].name, "surveys");
    assert_eq!(caps.unattached[0].status, SkillStatus::Unattached);
}

/// A skill an agent names twice is one skill for it: its tools and their
/// dead references count once, in the text and the JSON alike, as the
/// summary and the grants count them; each naming's own problem (written
/// in two places) is still one dead reference each.
#[test]
fn a_skill_named_twice_is_one_skill_for_the_agent() {
    let caps = build_caps(&stack(json!({
        "skills": [
            {"name": "s", "label": "S", "tools": ["zzz", "query_data"]},
            {"name": "b", "surface": "build", "tools": ["yyy"]}
        ],
        "agents": [{"name": "ag", "skills": ["s", "b", "s", "b"]}]
    })));
    let got: Vec<(DeadKind, String)> = dead(&caps, "ag")
        .into_iter()
        .map(|(kind, _, path)| (kind, path))
        .collect();
    assert_eq!(
        got,
        [
            (DeadKind::ToolUnresolved, "skills[0].tools[0]".to_owned()),
            (
                DeadKind::SkillSurfaceMismatch,
                "agents[0].skills[1]".to_owned()
            ),
            (DeadKind::ToolUnresolved, "skills[1].tools[0]".to_owned()),
            (
                DeadKind::SkillSurfaceMismatch,
                "agents[0].skills[3]".to_owned()
            ),
        ]
    );
    assert_eq!(effective(&caps, "ag"), ["query_data"]);

    let text = render(&caps, Format::Text, None);
    assert_eq!(text.matches("zzz: DEAD").count(), 1, "{text}");
    assert_eq!(text.matches("yyy: DEAD").count(), 1, "{text}");
    assert_eq!(
        text.matches("(named again: its tools are listed under agents[0].skills[0])")
            .count(),
        1,
        "{text}"
    );
    assert!(text.contains("  dead references: 4\n"), "{text}");
    assert!(text.ends_with("· 4 dead references\n"), "{text}");

    let json: Value = serde_json::from_str(&render(&caps, Format::Json, None)).unwrap();
    let agent = &json["agents"][0];
    let tools: Vec<usize> = agent["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tools"].as_array().unwrap().len())
        .collect();
    assert_eq!(tools, [2, 1, 0, 0]);
    assert_eq!(agent["skills"][2]["definition"], "skills[0]");
    assert_eq!(agent["skills"][3]["dead"]["path"], "agents[0].skills[3]");
    assert_eq!(agent["deadReferences"].as_array().unwrap().len(), 4);
    assert_eq!(json["summary"]["deadReferences"], 4);
}

#[test]
fn surface_both_binds_to_either_and_default_surface_is_ask() {
    let caps = build_caps(&stack(json!({
        "skills": [
            {"name": "either", "surface": "both", "tools": ["query_data"]},
            {"name": "plain", "tools": ["get_record"]},
            {"name": "authoring", "surface": "build", "tools": ["add_field"]}
        ],
        "agents": [
            {"name": "asker", "skills": ["either", "plain", "authoring"]},
            {"name": "builder", "surface": "build", "skills": ["either", "plain", "authoring"]}
        ]
    })));
    assert_eq!(effective(&caps, "asker"), ["get_record", "query_data"]);
    assert_eq!(effective(&caps, "builder"), ["add_field", "query_data"]);
    let kinds: Vec<DeadKind> = caps
        .dead(&caps.agent("builder").unwrap().skills)
        .map(|d| d.kind)
        .collect();
    assert_eq!(kinds, [DeadKind::SkillSurfaceMismatch]);
}

#[test]
fn map_shaped_collections_are_keyed_by_name() {
    let caps = build_caps(&stack(json!({
        "objects": {"invoice": {"actions": {
            "send_invoice": {"type": "api", "target": "/send",
                "ai": {"exposed": true, "description": "Sends the invoice to the customer by email."}}
        }}},
        "tools": {"lookup": {"binding": {"type": "action", "name": "send_invoice"}}},
        "skills": {"billing": {"tools": ["action_send_invoice", "lookup", "nope"]}},
        "agents": {"clerk": {"skills": ["billing", "missing"]}}
    })));
    // The record supersedes `action_send_invoice`: the effective set has
    // the refined name, and the raw name is dead, pointing at it.
    assert_eq!(effective(&caps, "clerk"), ["lookup"]);
    let action = &caps.actions[caps.tool("lookup").unwrap().action.unwrap()];
    assert_eq!(action.object, Some("invoice"));
    assert_eq!(action.path(), "objects[0].actions[0]");
    assert_eq!(
        caps.tool("lookup").unwrap().source,
        ToolSource::Record {
            path: "tools[0]".to_owned()
        }
    );
    assert_eq!(
        dead(&caps, "clerk"),
        [
            (
                DeadKind::ToolSuperseded,
                "action_send_invoice".into(),
                "skills[0].tools[0]".into()
            ),
            (
                DeadKind::ToolUnresolved,
                "nope".into(),
                "skills[0].tools[2]".into()
            ),
            (
                DeadKind::SkillMissing,
                "missing".into(),
                "agents[0].skills[1]".into()
            ),
        ]
    );
    assert_eq!(caps.agent("clerk").unwrap().path, "agents[0]");
}

#[test]
fn arrays_drop_non_objects_before_indexing() {
    let caps = build_caps(&stack(json!({
        "skills": [null, 7, {"name": "s", "tools": [1, "ghost"]}],
        "agents": ["junk", {"skills": [null, "s"]}]
    })));
    let agent = &caps.agents[0];
    assert_eq!(agent.name, "#0");
    assert_eq!(agent.skills[0].path, "agents[0].skills[1]");
    assert_eq!(
        dead(&caps, "#0"),
        [(
            DeadKind::ToolUnresolved,
            "ghost".into(),
            "skills[0].tools[1]".into()
        )]
    );
}

#[test]
fn junk_shapes_never_panic() {
    let junk = [
        json!({}),
        json!({"agents": 5, "skills": "x", "tools": null, "objects": true, "actions": 1.5}),
        json!({"agents": [{"skills": {"a": 1}}], "skills": [{"tools": {"a": "b"}}]}),
        json!({"agents": [{"name": 3, "surface": [], "active": "no", "skills": [[], {}, 4]}]}),
        json!({"skills": [{"name": {}, "surface": 9, "tools": ["*", "**", "", "a*b", "\u{1F600}*"]}]}),
        json!({"tools": [{"name": "t", "binding": {"type": 5, "name": []}}, {"name": 4}]}),
        json!({"tools": {"t": {"binding": {"type": "action"}}}, "skills": {"s": {"tools": ["t"]}}}),
        json!({"objects": [{"name": 1, "actions": [{"name": "a", "ai": "yes"}, {"ai": {}}]}]}),
        json!({"objects": {"o": {"actions": "none"}}, "actions": {"x": null}}),
        json!({"flows": 3, "tools": [{"name": "f", "binding": {"type": "flow", "name": "nope"}}]}),
        json!({"agents": [{"name": "a\"b<c>|#&`\nd", "skills": ["s\"x"]}],
               "skills": [{"name": "s\"x", "tools": ["we\"ird|<b>", "\\"]}]}),
    ];
    for doc in junk {
        let caps = build_caps(&stack(doc.clone()));
        for format in [Format::Text, Format::Json, Format::Dot, Format::Mermaid] {
            let out = render(&caps, format, None);
            assert!(!out.is_empty(), "{doc} {format:?}");
            if format == Format::Json {
                serde_json::from_str::<Value>(&out).unwrap();
            }
        }
    }
}

#[test]
fn a_tool_name_longer_than_a_format_width_renders() {
    // `{:<width$}` panics for a width above u16::MAX.
    let name = "t".repeat(70_000);
    let caps = build_caps(&stack(json!({
        "tools": [{"name": name, "label": "Long", "description": "a tool with a very long name"}],
        "skills": [{"name": "s", "label": "S", "tools": [name, "short"]}],
        "agents": [{"name": "a", "label": "A", "skills": ["s"]}],
    })));
    let text = render(&caps, Format::Text, None);
    // The effective-tools line: the name, two spaces, what it is, who grants it.
    let granted = format!("    {name}  ");
    let line = text.lines().find(|l| l.starts_with(&granted)).unwrap();
    assert!(line.ends_with("; via s"), "{}", &line[line.len() - 80..]);
}

#[test]
fn labels_are_escaped_in_graph_formats() {
    let caps = build_caps(&stack(json!({
        "agents": [{"name": "a\"b", "skills": ["s"]}],
        "skills": [{"name": "s", "tools": ["we\"ird|<b>#1"]}]
    })));
    let dot = render(&caps, Format::Dot, None);
    assert!(dot.contains(r#"label="agent\na\"b""#), "{dot}");
    assert!(dot.contains(r#"we\"ird|<b>#1"#), "{dot}");
    let mermaid = render(&caps, Format::Mermaid, None);
    assert!(
        mermaid.contains("we#quot;ird#124;#lt;b#gt;#35;1"),
        "{mermaid}"
    );
    assert!(!mermaid.contains("we\"ird"), "{mermaid}");
}

#[test]
fn unknown_agent_lists_the_known_ones() {
    let caps = fixture();
    let err = capabilities::render(
        &caps,
        &RenderOptions {
            format: Format::Text,
            agent: Some("nobody".to_owned()),
            expand: false,
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            &err,
            CapabilitiesError::UnknownAgent { name, known }
                if name == "nobody" && known == &["support_desk", "studio_helper"]
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "no agent named \"nobody\" in this stack; known agents: support_desk, studio_helper"
    );
}

#[test]
fn agent_filter_draws_only_what_the_agent_reaches() {
    let caps = fixture();
    let dot = render(&caps, Format::Dot, Some("studio_helper"));
    assert!(dot.contains("studio_helper"));
    assert!(!dot.contains("support_desk"));
    assert!(!dot.contains("case_handling"));
    assert!(dot.contains("skill\\nknowledge"));
    let json: Value =
        serde_json::from_str(&render(&caps, Format::Json, Some("studio_helper"))).unwrap();
    assert_eq!(json["agents"].as_array().unwrap().len(), 1);
    assert_eq!(json["unattached"], Value::Null);
}

#[test]
fn dead_references_are_red_in_dot_and_mermaid() {
    let caps = fixture();
    let dot = render(&caps, Format::Dot, None);
    let dead_nodes: Vec<String> = dot
        .lines()
        .filter(|l| l.contains("label=\"dead: "))
        .map(|l| l.trim().split(' ').next().unwrap().to_owned())
        .collect();
    // 3 tool refs in case_handling/knowledge, the empty wildcard, the missing skill.
    assert_eq!(dead_nodes.len(), 5, "{dot}");
    for line in dot.lines().filter(|l| l.contains("label=\"dead: ")) {
        assert!(line.contains("color=red"), "{line}");
    }
    for node in &dead_nodes {
        let edge = dot
            .lines()
            .find(|l| l.contains(&format!("-> {node}")))
            .unwrap_or_else(|| panic!("no edge to {node}"));
        assert!(edge.contains("color=red"), "{edge}");
    }
    let approval = dot
        .lines()
        .find(|l| l.contains("action_close_case"))
        .unwrap();
    assert!(approval.contains("needs approval (mode: delete)") && approval.contains("penwidth"));

    let mermaid = render(&caps, Format::Mermaid, None);
    let links: Vec<&str> = mermaid
        .lines()
        .filter(|l| l.contains("-->") || l.contains("-.->"))
        .collect();
    let red: Vec<usize> = mermaid
        .lines()
        .find_map(|l| l.trim().strip_prefix("linkStyle "))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .split(',')
        .map(|n| n.parse().unwrap())
        .collect();
    let dotted: Vec<usize> = links
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("-.->"))
        .map(|(i, _)| i)
        .collect();
    // Dead-reference edges plus the surface-mismatch and inactive skill edges.
    assert_eq!(red, dotted);
    assert_eq!(red.len(), 7);
    let dead_class = mermaid
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("class ")
                .filter(|c| c.ends_with(" dead"))
        })
        .unwrap();
    assert_eq!(dead_class.split(',').count(), 5);
}

#[test]
fn hotcrm_without_agents_shows_its_skills_as_unattached() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/hotcrm-skills.json"
    ))
    .unwrap();
    let caps = build_caps(&stack(serde_json::from_str(&text).unwrap()));
    assert!(caps.agents.is_empty());
    assert_eq!(caps.unattached.len(), 6);
    // The lint's ten findings are the ten dead tool references.
    assert_eq!(caps.dead(&caps.unattached).count(), 10);
    assert!(
        caps.dead(&caps.unattached)
            .all(|d| d.kind == DeadKind::ToolUnresolved)
    );
    assert_eq!(caps.grants(&caps.unattached).tool_count, 6);
    insta::assert_snapshot!("hotcrm_text", render(&caps, Format::Text, None));
}

#[test]
fn graph_links_tools_to_actions_and_objects() {
    let caps = fixture();
    let g = caps.graph();
    let find = |want: &Node| g.node_indices().find(|&n| &g[n] == want).unwrap();
    let close = caps
        .actions
        .iter()
        .position(|a| a.name == "close_case")
        .unwrap();
    let tool = caps
        .tools
        .iter()
        .position(|t| t.name == "action_close_case")
        .unwrap();
    let t = find(&Node::Tool(tool));
    let a = find(&Node::Action(close));
    let o = find(&Node::Object("case"));
    assert!(g.contains_edge(t, a));
    assert!(g.contains_edge(a, o));
    let flow = find(&Node::Flow("case_summary"));
    let record = caps
        .tools
        .iter()
        .position(|t| t.name == "summarise_case")
        .unwrap();
    assert!(g.contains_edge(find(&Node::Tool(record)), flow));
    // case_print is neither exposed nor referenced: not in the graph.
    let print = caps
        .actions
        .iter()
        .position(|a| a.name == "case_print")
        .unwrap();
    assert!(g.node_indices().all(|n| g[n] != Node::Action(print)));
}

#[test]
fn snapshot_text() {
    insta::assert_snapshot!("support_text", render(&fixture(), Format::Text, None));
}

#[test]
fn snapshot_json() {
    insta::assert_snapshot!("support_json", render(&fixture(), Format::Json, None));
}

#[test]
fn snapshot_dot() {
    insta::assert_snapshot!("support_dot", render(&fixture(), Format::Dot, None));
}

#[test]
fn snapshot_mermaid() {
    insta::assert_snapshot!("support_mermaid", render(&fixture(), Format::Mermaid, None));
}

#[test]
fn snapshot_expanded() {
    let caps = fixture();
    insta::assert_snapshot!(
        "support_text_expanded",
        render_expanded(&caps, Format::Text, None)
    );
    insta::assert_snapshot!(
        "support_json_expanded",
        render_expanded(&caps, Format::Json, None)
    );
    insta::assert_snapshot!(
        "support_dot_expanded",
        render_expanded(&caps, Format::Dot, None)
    );
}

#[test]
fn snapshot_one_agent() {
    let caps = fixture();
    insta::assert_snapshot!(
        "support_desk_text",
        render(&caps, Format::Text, Some("support_desk"))
    );
    insta::assert_snapshot!(
        "support_desk_mermaid",
        render(&caps, Format::Mermaid, Some("support_desk"))
    );
}

/// [`capabilities::build`] over a `serde_json` document.
fn build_caps(stack: &serde_json::Map<String, serde_json::Value>) -> Caps {
    let arena: &'static objectstack_spec::json::Arena = Box::leak(Box::default());
    let stack: &'static serde_json::Map<String, Value> = Box::leak(Box::new(stack.clone()));
    capabilities::build(objectstack_spec::json::Map::from_serde(stack, arena), arena)
}
