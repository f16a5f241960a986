use super::*;

const PREFIXES: &[&str] = &["action_"];

/// Runs the checker on a bad list both at run time and in a `const`
/// item's initialiser (the same evaluation the crate's guard uses), and
/// returns the violation.
macro_rules! violation {
    ($groups:expr, $prefixes:expr) => {{
        const RESULT: Result<(), Violation> = check($groups, $prefixes);
        assert_eq!(check($groups, $prefixes), RESULT);
        match RESULT {
            Err(v) => v,
            Ok(()) => panic!("the checker accepted a bad list"),
        }
    }};
}

fn assert_message(v: &Violation, parts: &[&str]) {
    let text = v.to_string();
    assert!(
        text.starts_with("registry invariant broken in registry/src/lib.rs: "),
        "{text}"
    );
    for part in parts {
        assert!(text.contains(part), "message lacks {part:?}: {text}");
    }
}

#[test]
fn the_registry_satisfies_its_invariants() {
    assert_eq!(check(GROUPS, FAMILY_PREFIXES), Ok(()));
}

#[test]
fn total_counts_every_group_and_the_packages_are_fixed() {
    assert_eq!(TOTAL, GROUPS.iter().map(|g| g.names.len()).sum::<usize>());
    assert_eq!(all_names().count(), TOTAL);
    assert_eq!(INDEX.len(), TOTAL);
    let packages: Vec<_> = GROUPS.iter().map(|g| g.package).collect();
    assert_eq!(packages, ["service-ai", "service-ai-studio"]);
    assert_eq!(group("service-ai-other"), None);
}

#[test]
fn all_names_is_package_order_then_list_order() {
    let names: Vec<_> = all_names().collect();
    let expected: Vec<_> = GROUPS
        .iter()
        .flat_map(|g| g.names.iter().copied())
        .collect();
    assert_eq!(names, expected);
    assert_eq!(names.first(), Some(&"aggregate_data"));
    let studio_starts = group("service-ai").map(|g| g.names.len());
    assert_eq!(
        studio_starts.and_then(|at| names.get(at)),
        Some(&"add_field")
    );
}

#[test]
fn every_name_is_found_with_its_owner() {
    for g in GROUPS {
        for name in g.names {
            assert!(is_platform_tool(name), "{name}");
            assert_eq!(owner(name), Some(g.package), "{name}");
        }
    }
}

#[test]
fn lookups_reject_near_misses() {
    for name in [
        "",
        "forecast_revenue",
        "describe_objec",
        "describe_objects",
        "Describe_object",
        "a",
        "zzz",
        "action_complete_task",
        "aggregate_data ",
    ] {
        assert!(!is_platform_tool(name), "{name:?}");
        assert_eq!(owner(name), None, "{name:?}");
    }
    assert_eq!(owner("query_data"), Some("service-ai"));
    assert_eq!(owner("load_tools"), Some("service-ai-studio"));
}

#[test]
fn the_index_is_sorted_and_complete() {
    assert_eq!(INDEX.len(), TOTAL);
    for pair in INDEX.windows(2) {
        assert!(
            pair[0].name < pair[1].name,
            "{} !< {}",
            pair[0].name,
            pair[1].name
        );
    }
    let mut names: Vec<_> = all_names().collect();
    names.sort_unstable();
    let indexed: Vec<_> = INDEX.iter().map(|e| e.name).collect();
    assert_eq!(indexed, names);
}

#[test]
fn families_and_action_names() {
    assert_eq!(family("action_complete_task"), Some("action_"));
    assert_eq!(family("query_data"), None);
    assert_eq!(family("actions_x"), None);
    assert_eq!(action_tool_name("x"), "action_x");
    assert_eq!(action_name("action_send_invoice"), Some("send_invoice"));
    assert_eq!(action_name("action_"), None);
    assert_eq!(action_name("query_data"), None);
    assert_eq!(action_name(&action_tool_name("a_b")), Some("a_b"));
}

#[test]
fn rejects_a_name_that_is_not_snake_case() {
    for bad in [
        "Describe_object",
        "describe-object",
        "_x",
        "x_",
        "a__b",
        "9x",
        "",
        "café",
    ] {
        let groups: &'static [Group] = Box::leak(Box::new([Group {
            package: "p",
            names: Box::leak(Box::new([bad])),
        }]));
        let v = check(groups, PREFIXES).unwrap_err();
        assert_eq!(
            v,
            Violation::NotSnakeCase {
                package: "p",
                name: bad
            },
            "{bad:?}"
        );
    }
    const BAD: &[Group] = &[Group {
        package: "service-ai",
        names: &["aggregate_data", "getRecord"],
    }];
    let v = violation!(BAD, PREFIXES);
    assert_eq!(v.code(), "not_snake_case");
    assert_eq!(v.entry(), "getRecord");
    assert_message(
        &v,
        &[
            "`getRecord`",
            "`service-ai` group",
            "not snake_case",
            "rename it",
        ],
    );
}

#[test]
fn accepts_snake_case_with_digits() {
    const OK: &[Group] = &[Group {
        package: "p",
        names: &["a", "a1_b2", "v2"],
    }];
    assert_eq!(check(OK, PREFIXES), Ok(()));
}

#[test]
fn rejects_an_unsorted_group() {
    const BAD: &[Group] = &[Group {
        package: "service-ai",
        names: &["aggregate_data", "query_data", "get_record"],
    }];
    let v = violation!(BAD, PREFIXES);
    assert_eq!(
        v,
        Violation::Unsorted {
            package: "service-ai",
            name: "get_record",
            previous: "query_data"
        }
    );
    assert_message(
        &v,
        &[
            "`service-ai` group is not sorted",
            "move `get_record` above `query_data`",
        ],
    );
}

#[test]
fn rejects_a_name_listed_twice_in_one_group() {
    const BAD: &[Group] = &[Group {
        package: "service-ai",
        names: &["get_record", "get_record"],
    }];
    let v = violation!(BAD, PREFIXES);
    assert_eq!(
        v,
        Violation::ListedTwice {
            package: "service-ai",
            name: "get_record"
        }
    );
    assert_message(&v, &["`get_record` is listed twice", "delete one"]);
}

#[test]
fn rejects_a_name_in_two_groups() {
    const BAD: &[Group] = &[
        Group {
            package: "service-ai",
            names: &["describe_object", "query_data"],
        },
        Group {
            package: "service-ai-studio",
            names: &["add_field", "describe_object"],
        },
    ];
    let v = violation!(BAD, PREFIXES);
    assert_eq!(
        v,
        Violation::InTwoGroups {
            name: "describe_object",
            first: "service-ai",
            second: "service-ai-studio"
        }
    );
    assert_message(
        &v,
        &[
            "`describe_object` is in both the `service-ai` and the `service-ai-studio` groups",
            "keep it only in the group of the package that registers it",
        ],
    );
}

#[test]
fn rejects_a_static_name_under_a_family_prefix() {
    const BAD: &[Group] = &[Group {
        package: "service-ai",
        names: &["action_send_invoice", "query_data"],
    }];
    let v = violation!(BAD, PREFIXES);
    assert_eq!(
        v,
        Violation::UnderFamilyPrefix {
            package: "service-ai",
            name: "action_send_invoice",
            prefix: "action_"
        }
    );
    assert_message(
        &v,
        &[
            "`action_send_invoice`",
            "family prefix `action_`",
            "rename the tool",
        ],
    );
    // The same name is fine when no family claims the prefix.
    assert_eq!(check(BAD, &[]), Ok(()));
}

#[test]
fn rejects_an_empty_group() {
    const BAD: &[Group] = &[
        Group {
            package: "service-ai",
            names: &["query_data"],
        },
        Group {
            package: "service-ai-studio",
            names: &[],
        },
    ];
    let v = violation!(BAD, PREFIXES);
    assert_eq!(
        v,
        Violation::EmptyGroup {
            package: "service-ai-studio"
        }
    );
    assert_message(
        &v,
        &[
            "the `service-ai-studio` group has no names",
            "or remove the group",
        ],
    );
}

#[test]
fn rejects_an_empty_or_repeated_package() {
    const EMPTY: &[Group] = &[
        Group {
            package: "a",
            names: &["x"],
        },
        Group {
            package: "",
            names: &["y"],
        },
    ];
    let v = violation!(EMPTY, PREFIXES);
    assert_eq!(v, Violation::EmptyPackage { group: 1 });
    assert_message(&v, &["group #1 has an empty package name"]);

    const TWICE: &[Group] = &[
        Group {
            package: "a",
            names: &["x"],
        },
        Group {
            package: "a",
            names: &["y"],
        },
    ];
    let v = violation!(TWICE, PREFIXES);
    assert_eq!(v, Violation::DuplicatePackage { package: "a" });
    assert_message(&v, &["the package `a` has two groups", "merge them"]);
}

#[test]
fn rejects_a_malformed_family_prefix() {
    const GOOD: &[Group] = &[Group {
        package: "p",
        names: &["x"],
    }];
    for bad in ["", "_", "action", "Action_", "action__", "a-b_"] {
        let prefixes: &'static [&'static str] = Box::leak(Box::new([bad]));
        assert_eq!(
            check(GOOD, prefixes),
            Err(Violation::BadPrefix { prefix: bad }),
            "{bad:?}"
        );
    }
    let v = violation!(GOOD, &["action"]);
    assert_message(&v, &["family prefix `action`", "write it like `action_`"]);
    assert_eq!(check(GOOD, &["action_", "flow_"]), Ok(()));
}

#[test]
#[should_panic(expected = "move `get_record` above `query_data`")]
fn assert_valid_panics_with_the_message() {
    assert_valid(
        &[Group {
            package: "service-ai",
            names: &["query_data", "get_record"],
        }],
        PREFIXES,
    );
}

#[test]
fn messages_are_cut_at_a_character_boundary() {
    let mut m = Message::new();
    m.push(&"a".repeat(Message::CAPACITY - 1));
    m.push("é");
    assert_eq!(m.as_str().len(), Message::CAPACITY - 1);
    let mut m = Message::new();
    m.push_usize(0);
    m.push(" ");
    m.push_usize(1_234_567);
    assert_eq!(m.as_str(), "0 1234567");
}

#[test]
fn json_strings_are_escaped() {
    let mut out = String::new();
    push_json_string(&mut out, "a\"b\\c\nd\te\r\u{8}\u{c}\u{1}\u{1f}é/");
    assert_eq!(out, r#""a\"b\\c\nd\te\r\b\f\u0001\u001fé/""#);
}

#[test]
fn render_json_lists_every_group_in_order() {
    let json = render_json();
    assert!(json.ends_with("}\n"));
    assert_eq!(json, render_json(), "rendering is deterministic");
    assert!(json.contains(&format!("\n  \"total\": {TOTAL},\n")));
    assert!(json.contains("\"version\": \"17.4.0\""));
    assert!(json.contains("\"familyPrefixes\": [\n    \"action_\"\n  ],"));
    let mut from = 0;
    for g in GROUPS {
        let at = json[from..]
            .find(&format!("\"package\": \"{}\"", g.package))
            .unwrap()
            + from;
        from = at;
        for name in g.names {
            let found = json[from..].find(&format!("\"{name}\"")).unwrap() + from;
            assert!(found > from, "{name} out of order");
            from = found;
        }
    }
}
