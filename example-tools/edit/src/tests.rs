//! Unit tests of the pure helpers; the host imports (read record, atomic write) are not available
//! natively and are covered by the integration suite.

use super::*;

const PATH: &str = "/ws/f.txt";

fn apply(original: &str, old: &str, new: &str, replace_all: bool) -> Result<Plan, ToolError> {
    plan(PATH, original, old, new, replace_all)
}

#[test]
fn splits_a_bom_only_at_the_start() {
    for (text, expected) in [
        ("\u{feff}a\n", (true, "a\n")),
        ("a\u{feff}\n", (false, "a\u{feff}\n")),
        ("\u{feff}", (true, "")),
        ("", (false, "")),
    ] {
        assert_eq!(split_bom(text), expected, "{text:?}");
    }
}

#[test]
fn crlf_wins_only_with_a_majority() {
    for (text, expected) in [
        ("", false),
        ("a", false),
        ("a\r\n", true),
        ("a\n", false),
        ("a\r\nb\r\nc\n", true),
        ("a\r\nb\nc\n", false),
        ("a\r\nb\n", false),
        ("a\rb\r", false),
    ] {
        assert_eq!(uses_crlf(text), expected, "{text:?}");
    }
}

#[test]
fn translates_only_lone_line_feeds() {
    for (text, expected) in [
        ("", ""),
        ("a", "a"),
        ("a\nb", "a\r\nb"),
        ("a\r\nb\n", "a\r\nb\r\n"),
        ("\n\n", "\r\n\r\n"),
        ("é\nü", "é\r\nü"),
        ("a\r\r\n", "a\r\r\n"),
    ] {
        assert_eq!(to_crlf(text), expected, "{text:?}");
    }
    assert!(matches!(to_crlf("a\r\nb"), Cow::Borrowed(_)));
}

#[test]
fn finds_non_overlapping_occurrences_and_their_lines() {
    let text = "aa\nx aa aa\n\naaa\n";
    let offsets = occurrences(text, "aa");
    assert_eq!(offsets, [0, 5, 8, 12]);
    assert_eq!(lines_at(text, &offsets), [1, 2, 4]);
    for (offset, line) in [(0, 1), (2, 1), (3, 2), (11, 3), (12, 4), (text.len(), 5)] {
        assert_eq!(line_at(text, offset), line, "offset {offset}");
    }
}

#[test]
fn the_last_line_of_inserted_text() {
    for (start, inserted, expected) in [
        (3, "", 3),
        (3, "x", 3),
        (3, "x\n", 3),
        (3, "x\ny", 4),
        (3, "x\ny\n", 4),
        (3, "\n\n", 4),
    ] {
        assert_eq!(last_line_of(start, inserted), expected, "{inserted:?}");
    }
}

#[test]
fn describes_line_lists() {
    for (lines, expected) in [
        (&[7][..], "at line 7"),
        (&[1, 2], "at lines 1, 2"),
        (&[1, 2, 3, 4, 5], "at lines 1, 2, 3, 4, 5"),
        (&[1, 2, 3, 4, 5, 6, 9], "at lines 1, 2, 3, 4, 5 and 2 more"),
    ] {
        assert_eq!(describe_lines(lines), expected);
    }
}

#[test]
fn counts_lines_like_read() {
    for (text, expected) in [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("\n\n", 2)] {
        assert_eq!(count_lines(text), expected, "{text:?}");
    }
}

/// (original, old, new, replace_all, expected content, replacements, start line, end line)
type Case = (
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static str,
    usize,
    usize,
    usize,
);

#[test]
fn plans_keep_encoding_line_endings_and_the_final_newline() {
    let cases: &[Case] = &[
        // Plain single replacement.
        ("a\nb\nc\n", "b", "B", false, "a\nB\nc\n", 1, 2, 2),
        // No trailing newline stays without one.
        ("a\nb", "b", "beta", false, "a\nbeta", 1, 2, 2),
        // CRLF: the model's \n becomes \r\n in both strings.
        (
            "a\r\nb\r\nc\r\n",
            "a\nb\n",
            "x\ny\nz\n",
            false,
            "x\r\ny\r\nz\r\nc\r\n",
            1,
            1,
            3,
        ),
        // CRLF without a final newline.
        ("a\r\nb", "a\nb", "b\na", false, "b\r\na", 1, 1, 2),
        // The model already sent \r\n: not doubled.
        (
            "a\r\nb\r\n",
            "a\r\nb",
            "c\r\nd",
            false,
            "c\r\nd\r\n",
            1,
            1,
            2,
        ),
        // BOM set aside for matching and put back; lines count without it.
        ("\u{feff}x\ny\n", "y", "z", false, "\u{feff}x\nz\n", 1, 2, 2),
        // A match at the very start after the BOM.
        (
            "\u{feff}head\n",
            "head",
            "top",
            false,
            "\u{feff}top\n",
            1,
            1,
            1,
        ),
        // BOM and CRLF together.
        (
            "\u{feff}a\r\nb\r\n",
            "a\nb",
            "c",
            false,
            "\u{feff}c\r\n",
            1,
            1,
            1,
        ),
        // replace_all replaces every occurrence; the first one sets the lines.
        (
            "x\nfoo\nfoo bar\nfoo\n",
            "foo",
            "baz",
            true,
            "x\nbaz\nbaz bar\nbaz\n",
            3,
            2,
            2,
        ),
        // replace_all with one occurrence is fine.
        ("one\n", "one", "two", true, "two\n", 1, 1, 1),
        // Deleting lines.
        ("a\nb\nc\n", "b\n", "", false, "a\nc\n", 1, 2, 2),
        // A mixed file: an LF region in a CRLF file still matches the text as given.
        (
            "a\r\nb\r\nc\nd\n\r\ne\r\n",
            "c\nd",
            "C\nD",
            false,
            "a\r\nb\r\nC\nD\n\r\ne\r\n",
            1,
            3,
            4,
        ),
        // Multi-byte text around the match.
        ("é\nñandú\n", "ñandú", "emú", false, "é\nemú\n", 1, 2, 2),
        // An empty old_string fills a blank file.
        ("", "", "new\n", false, "new\n", 1, 1, 1),
        ("\u{feff}\n", "", "x\ny", false, "\u{feff}x\ny", 1, 1, 2),
    ];
    for &(original, old, new, replace_all, content, replacements, start_line, end_line) in cases {
        let expected = Plan {
            content: content.to_owned(),
            replacements,
            start_line,
            end_line,
        };
        assert_eq!(
            apply(original, old, new, replace_all),
            Ok(expected),
            "{original:?}: {old:?} -> {new:?}"
        );
    }
}

#[test]
fn ambiguous_old_strings_list_count_and_lines() {
    let error = apply("foo\nbar\nfoo\nfoo foo\n", "foo", "x", false).unwrap_err();
    assert_eq!(error.kind, "old_string_not_unique");
    assert_eq!(
        error.message,
        "old_string occurs 4 times in /ws/f.txt (at lines 1, 3, 4); add surrounding lines to \
         old_string so it matches exactly one place, or set replace_all to true to replace every \
         occurrence"
    );
    let many: String = (0..9).map(|_| "x\n").collect();
    let error = apply(&many, "x", "y", false).unwrap_err();
    assert!(
        error.message.starts_with(
            "old_string occurs 9 times in /ws/f.txt (at lines 1, 2, 3, 4, 5 and 4 more);"
        ),
        "{}",
        error.message
    );
}

#[test]
fn an_empty_old_string_never_overwrites_content() {
    let error = apply("data\n", "", "x", false).unwrap_err();
    assert_eq!(error.kind, "file_exists");
    assert!(error.message.contains("use Write"), "{}", error.message);
}

#[test]
fn missing_old_strings_explain_the_nearest_miss() {
    let cases = [
        // Indentation differs.
        (
            "fn main() {\n    let x = 1;\n    let y = 2;\n}\n",
            "  let x = 1;\n  let y = 2;",
            "it matches at line 2 if leading and trailing whitespace on each line is ignored",
        ),
        // Trailing spaces in the file, a partial first and last line in old_string.
        (
            "a\nlet value = compute(1,   \n  2);\n",
            "compute(1,\n  2)",
            "it matches at line 2 if leading and trailing whitespace",
        ),
        // Line endings differ inside a mixed file.
        (
            "a\r\nb\r\nc\nd\r\n",
            "b\nc\r\nd",
            "it matches if CRLF and LF line endings are not told apart",
        ),
        // The first line is there, the rest differs.
        (
            "x\nfn compute() {\n    1\n}\n",
            "fn compute() {\n    2\n}",
            "its first line, `fn compute() {`, occurs at line 2 but the text after it differs",
        ),
        // Nothing close.
        (
            "a\nb\n",
            "zebra",
            "; Read the file again and copy the text to replace exactly",
        ),
    ];
    for (text, old, hint) in cases {
        let error = apply(text, old, "new", false).unwrap_err();
        assert_eq!(error.kind, "old_string_not_found");
        assert!(
            error.message.starts_with(
                "old_string was not found in /ws/f.txt. It must match the file's text exactly"
            ),
            "{}",
            error.message
        );
        assert!(error.message.contains(hint), "{old:?}: {}", error.message);
    }
}

#[test]
fn a_short_first_line_gives_no_hint() {
    assert_eq!(near_miss("}\n}\n", "}\nfoo"), None);
}

#[test]
fn loose_matches_need_every_line() {
    let file = ["a", "  b  ", "c", "d"];
    for (old, expected) in [
        (&["b", "c"][..], Some(2)),
        (&["b"], Some(2)),
        (&["c", "d"], Some(3)),
        (&["c", "x"], None),
        (&["d", "e"], None),
        (&["a", "b", "c", "d", "e"], None),
        (&["", " "], None),
    ] {
        assert_eq!(loose_match(&file, old), expected, "{old:?}");
    }
}

#[test]
fn snippets_use_read_format_and_cut_long_lines() {
    let text = "one\r\ntwo\r\nthree";
    assert_eq!(
        render_snippet(text, 1, 3),
        ("     1\tone\n     2\ttwo\n     3\tthree\n".to_owned(), 3)
    );
    assert_eq!(
        render_snippet(text, 2, 9),
        ("     2\ttwo\n     3\tthree\n".to_owned(), 3)
    );
    let long = format!("{}\n", "é".repeat(2500));
    let (snippet, shown) = render_snippet(&long, 1, 1);
    assert_eq!(shown, 1);
    assert_eq!(
        snippet,
        format!(
            "     1\t{}… [line cut: showed the first 2000 characters of a 5000-byte line]\n",
            "é".repeat(2000)
        )
    );
}

#[test]
fn snippets_stop_at_forty_lines() {
    let text: String = (1..=100).map(|n| format!("{n}\n")).collect();
    let (snippet, shown) = render_snippet(&text, 10, 90);
    assert_eq!(shown, 49);
    assert_eq!(snippet.lines().count(), 40);
    assert!(snippet.starts_with("    10\t10\n"), "{snippet}");
    assert!(snippet.ends_with("    49\t49\n"), "{snippet}");
}

fn input(old: &str, new: &str, replace_all: bool) -> EditInput {
    EditInput {
        file_path: PATH.to_owned(),
        old_string: old.to_owned(),
        new_string: new.to_owned(),
        replace_all,
    }
}

fn output_text(output: &Output) -> &str {
    match output.content.as_slice() {
        [janua_sdk::Content::Text(text)] => text,
        other => panic!("expected one text part, got {other:?}"),
    }
}

#[test]
fn results_show_four_lines_around_the_change() {
    let original: String = (1..=20).map(|n| format!("line {n}\r\n")).collect();
    let edit = input("line 10\nline 11", "ten\neleven\ntwelve", false);
    let plan = apply(&original, &edit.old_string, &edit.new_string, false).unwrap();
    let output = edited_output(PATH, &edit, &plan);
    let expected = [
        "Edited /ws/f.txt: replaced 1 occurrence",
        "     6\tline 6",
        "     7\tline 7",
        "     8\tline 8",
        "     9\tline 9",
        "    10\tten",
        "    11\televen",
        "    12\ttwelve",
        "    13\tline 12",
        "    14\tline 13",
        "    15\tline 14",
        "    16\tline 15",
        "",
    ];
    assert_eq!(output_text(&output), expected.join("\n"));
    assert_eq!(
        output.structured,
        Some(json!({
            "filePath": PATH,
            "oldString": "line 10\nline 11",
            "newString": "ten\neleven\ntwelve",
            "replaceAll": false,
            "replacements": 1,
            "startLine": 10,
        }))
    );
}

#[test]
fn results_near_the_edges_and_past_forty_lines() {
    let edit = input("a", "A", true);
    let plan = apply("a\nb\na", "a", "A", true).unwrap();
    assert_eq!(
        output_text(&edited_output(PATH, &edit, &plan)),
        "Edited /ws/f.txt: replaced 2 occurrences\n     1\tA\n     2\tb\n     3\tA\n"
    );
    let big: String = (1..=60).map(|n| format!("{n}\n")).collect();
    let edit = input("x\n", &big, false);
    let plan = apply("x\n", "x\n", &big, false).unwrap();
    let text = edited_output(PATH, &edit, &plan);
    let text = output_text(&text);
    assert!(text.ends_with("    40\t40\n<notice>Showed lines 1-40; Read with offset 41 to see the rest of the change.</notice>"), "{text}");
}

#[test]
fn created_files_report_lines_and_bytes() {
    let edit = input("", "a\nb\n", false);
    let output = created_output(PATH, &edit);
    assert_eq!(output_text(&output), "Created /ws/f.txt (2 lines, 4 bytes)");
    assert_eq!(output.structured.unwrap()["replacements"], 0);
}
