//! Splits a shell command line into the simple commands it would run, for Bash rules.
//!
//! Parsing uses `brush-parser`, the parser of the brush shell: a maintained, pure-Rust parser for
//! bash syntax (pipelines, `&&`/`||`, `|&`, subshells, `$(...)`, backticks, `<(...)`, here-docs,
//! `[[ ]]`) with a typed AST, so no C toolchain is needed and every construct is an enum variant
//! we must handle rather than a node kind we might forget. tree-sitter-bash was the alternative; its
//! error-recovering parse would need every `ERROR` node hunted down to fail closed.
//!
//! Everything the walker does not fully understand marks the command `opaque`: an opaque command is
//! never allowed by a pattern rule, and what it could run is unknown (`unknown.rs`): a deny rule
//! that could match it denies it, while deny and ask rules still see every part found.

use brush_parser::ast;

use super::bash::{EXEC_WRAPPERS, STRIPPED_WRAPPERS};

mod lexical;

use brush_parser::word::{TildeExpr, WordPiece, WordPieceWithSource};
use lexical::{
    ansi_c_unquote, assigns_environment, brace_expansion, heredoc_tag_misuse, named_fd, nesting,
    oversized_descriptor, subscript_depth, substitution_depth, unclosed, unclosed_subscripts,
    unusual_heredoc_delimiter,
};

/// Commands longer than this are never allowed by a pattern rule (Claude Code's limit).
pub const MAX_COMMAND_CHARS: usize = 10_000;

/// Nesting of substitutions and compound commands beyond this is opaque; it also bounds the
/// parser's recursion, whose stack use grows with nesting.
const MAX_NESTING: usize = 64;

/// More unclosed `(` than this is opaque without parsing: the parser's backtracking over them is
/// exponential, and a line bash would reject anyway need not be split.
const MAX_UNCLOSED_PARENTHESES: usize = 8;

/// Deepest `name[` subscript nesting parsed; see `lexical::subscript_depth`.
const MAX_SUBSCRIPT_DEPTH: usize = 3;

/// Most `name[` subscripts left unclosed that are parsed; see `lexical::unclosed_subscripts`.
const MAX_UNCLOSED_SUBSCRIPTS: usize = 2;

/// Deepest `$(` / `$((` nesting parsed; see `lexical::substitution_depth`.
const MAX_SUBSTITUTION_DEPTH: usize = 4;

/// Most brackets of all kinds (`(`, `{`, `[`) left unclosed that are parsed: mixed unclosed
/// substitutions and expansions backtrack together (found by the `shell_splitter` fuzz target:
/// eleven in a here-document body took two seconds). A real command leaves few or none.
const MAX_UNCLOSED_BRACKETS: usize = 6;

/// A whole command line, split.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellCommand {
    /// Every simple command, including those inside substitutions and compound commands.
    pub subcommands: Vec<Subcommand>,
    /// Why a pattern rule may not allow this command line, if it may not: the line is not fully
    /// known (past a limit, unparsable, a program or code string built when it runs), so it may
    /// run any program.
    pub opaque: Option<String>,
}

/// One simple command: `VAR=x program args... >redirects`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subcommand {
    /// Leading `NAME=value` assignments, by name.
    pub assignments: Vec<String>,
    /// The program and its arguments.
    pub words: Vec<ShellWord>,
    /// File redirections.
    pub redirects: Vec<Redirect>,
}

/// One word with quoting removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellWord {
    /// The text with quotes and escapes removed; expansions keep their source spelling.
    pub text: String,
    /// False when the word contains a parameter, command or arithmetic expansion.
    pub literal: bool,
    /// True when the word holds an unquoted glob character (`*`, `?`, `[`).
    pub glob: bool,
    /// True when the word starts with an unquoted `~`.
    pub tilde: bool,
}

/// A file redirection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The target file.
    pub target: ShellWord,
    /// True for `>`, `>>`, `>|`, `<>` and `&>`; false for `<`.
    pub write: bool,
}

impl Subcommand {
    /// The words joined with single spaces: the text Bash rules are matched against.
    pub fn text(&self) -> String {
        join(&self.words)
    }
}

/// The words joined with single spaces.
pub fn join(words: &[ShellWord]) -> String {
    let mut text = String::new();
    for (index, word) in words.iter().enumerate() {
        if index > 0 {
            text.push(' ');
        }
        text.push_str(&word.text);
    }
    text
}

/// Splits `command`. Never fails: what cannot be parsed is reported through `opaque`.
pub fn split(command: &str) -> ShellCommand {
    let mut walker = Walker::default();
    if command.chars().count() > MAX_COMMAND_CHARS {
        walker.opaque(format!(
            "the command is longer than {MAX_COMMAND_CHARS} characters"
        ));
        return walker.finish();
    }
    walker.program(command, 0);
    walker.finish()
}

#[derive(Default)]
struct Walker {
    subcommands: Vec<Subcommand>,
    opaque: Option<String>,
    /// A variable is given a value built when the line runs (a substitution, another
    /// variable, `printf -v`, `read`): arithmetic that names a variable could run what the value
    /// holds (`a[$(cmd)]`).
    built_values: bool,
    /// An arithmetic context names a variable.
    arithmetic_names: bool,
    /// The source text being walked, innermost last (AST locations index into it).
    sources: Vec<String>,
}

impl Walker {
    fn finish(mut self) -> ShellCommand {
        if self.built_values && self.arithmetic_names {
            self.opaque(
                "arithmetic evaluates a variable whose value is built when the line runs (a subscript in it runs commands)",
            );
        }
        ShellCommand {
            subcommands: self.subcommands,
            opaque: self.opaque,
        }
    }

    fn opaque(&mut self, why: impl Into<String>) {
        if self.opaque.is_none() {
            self.opaque = Some(why.into());
        }
    }

    fn program(&mut self, source: &str, depth: usize) {
        if depth > MAX_NESTING || nesting(source) > MAX_NESTING {
            self.opaque("the command nests too deeply to be checked");
            return;
        }
        if unclosed(source, '(', ')') > MAX_UNCLOSED_PARENTHESES {
            self.opaque("the command leaves parentheses unclosed");
            return;
        }
        let unclosed_brackets =
            unclosed(source, '(', ')') + unclosed(source, '{', '}') + unclosed(source, '[', ']');
        if unclosed_brackets > MAX_UNCLOSED_BRACKETS {
            self.opaque("the command leaves brackets unclosed");
            return;
        }
        if unclosed_subscripts(source) > MAX_UNCLOSED_SUBSCRIPTS {
            self.opaque("the command leaves array subscripts unclosed");
            return;
        }
        if substitution_depth(source) > MAX_SUBSTITUTION_DEPTH {
            self.opaque("the command nests substitutions too deeply to be checked");
            return;
        }
        if subscript_depth(source) > MAX_SUBSCRIPT_DEPTH {
            self.opaque("the command nests array subscripts too deeply to be checked");
            return;
        }
        if unusual_heredoc_delimiter(source) {
            self.opaque("a here-document has no plain delimiter word");
            return;
        }
        if oversized_descriptor(source) {
            self.opaque("a redirection names a file descriptor past the largest bash accepts");
            return;
        }
        let options = parser_options();
        let parsed = std::panic::catch_unwind(|| {
            brush_parser::Parser::new(std::io::Cursor::new(source), &options).parse_program()
        });
        match parsed {
            Ok(Ok(program)) => {
                self.sources.push(source.to_owned());
                for list in &program.complete_commands {
                    self.compound_list(list, depth);
                }
                self.sources.pop();
            }
            Ok(Err(error)) => self.opaque(format!("the command cannot be parsed: {error}")),
            Err(_) => self.opaque("the command cannot be parsed"),
        }
    }

    fn compound_list(&mut self, list: &ast::CompoundList, depth: usize) {
        for ast::CompoundListItem(and_or, _separator) in &list.0 {
            self.pipeline(&and_or.first, depth);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(pipeline) | ast::AndOr::Or(pipeline) => {
                        self.pipeline(pipeline, depth);
                    }
                }
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, depth: usize) {
        for command in &pipeline.seq {
            self.command(command, depth);
        }
    }

    fn command(&mut self, command: &ast::Command, depth: usize) {
        if depth > MAX_NESTING {
            self.opaque("the command nests too deeply to be checked");
            return;
        }
        match command {
            ast::Command::Simple(simple) => self.simple(simple, depth),
            ast::Command::Compound(compound, redirects) => {
                // Redirects of a compound command apply to every command inside it.
                let found = redirects
                    .as_ref()
                    .map(|list| self.redirects(&list.0, depth))
                    .unwrap_or_default();
                let first = self.subcommands.len();
                self.compound(compound, depth + 1);
                if !found.is_empty() {
                    if first == self.subcommands.len() {
                        self.subcommands.push(Subcommand::default());
                    }
                    for sub in &mut self.subcommands[first..] {
                        sub.redirects.extend(found.iter().cloned());
                    }
                }
            }
            ast::Command::Function(function) => {
                let ast::FunctionBody(body, redirects) = &function.body;
                if let Some(list) = redirects {
                    let found = self.redirects(&list.0, depth);
                    if !found.is_empty() {
                        self.subcommands.push(Subcommand {
                            redirects: found,
                            ..Subcommand::default()
                        });
                    }
                }
                // A function's body runs whenever its name is called, so it is checked as if it
                // ran here.
                self.compound(body, depth + 1);
            }
            ast::Command::ExtendedTest(test, redirects) => {
                self.extended_test(&test.expr, depth);
                if let Some(list) = redirects {
                    let found = self.redirects(&list.0, depth);
                    if !found.is_empty() {
                        self.subcommands.push(Subcommand {
                            redirects: found,
                            ..Subcommand::default()
                        });
                    }
                }
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, depth: usize) {
        match compound {
            ast::CompoundCommand::Arithmetic(arithmetic) => {
                // brush-parser reads `( (cmd) )` as `((cmd))`; bash runs it as nested subshells.
                let start = arithmetic.loc.start.index;
                let spelled = self
                    .sources
                    .last()
                    .and_then(|source| source.get(start..start + 2));
                if spelled == Some("((") {
                    self.arithmetic(&arithmetic.expr.value);
                } else {
                    self.program(&arithmetic.expr.value, depth + 1);
                }
            }
            ast::CompoundCommand::ArithmeticForClause(clause) => {
                for expr in [&clause.initializer, &clause.condition, &clause.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&expr.value);
                }
                self.compound_list(&clause.body.list, depth);
            }
            ast::CompoundCommand::BraceGroup(group) => self.compound_list(&group.list, depth),
            ast::CompoundCommand::Subshell(subshell) => self.compound_list(&subshell.list, depth),
            ast::CompoundCommand::ForClause(clause) => {
                if clause.variable_name.chars().any(|c| c.is_ascii_uppercase()) {
                    // `for PATH in ./x; do git ...` assigns an environment-style variable.
                    self.opaque(format!(
                        "the loop assigns the variable {}",
                        clause.variable_name
                    ));
                }
                for value in clause.values.iter().flatten() {
                    let value = self.word(&value.value, depth);
                    if value.text.contains('[')
                        || (value.literal
                            && (value.text.contains('`') || value.text.contains("$(")))
                    {
                        // A loop value may reach an arithmetic context through the variable.
                        self.opaque("a loop value holds a subscript or a substitution");
                    }
                }
                self.compound_list(&clause.body.list, depth);
            }
            ast::CompoundCommand::CaseClause(clause) => {
                self.word(&clause.value.value, depth);
                for case in &clause.cases {
                    for pattern in &case.patterns {
                        self.word(&pattern.value, depth);
                    }
                    if let Some(list) = &case.cmd {
                        self.compound_list(list, depth);
                    }
                }
            }
            ast::CompoundCommand::IfClause(clause) => {
                self.compound_list(&clause.condition, depth);
                self.compound_list(&clause.then, depth);
                for branch in clause.elses.iter().flatten() {
                    if let Some(condition) = &branch.condition {
                        self.compound_list(condition, depth);
                    }
                    self.compound_list(&branch.body, depth);
                }
            }
            ast::CompoundCommand::WhileClause(clause)
            | ast::CompoundCommand::UntilClause(clause) => {
                self.compound_list(&clause.0, depth);
                self.compound_list(&clause.1.list, depth);
            }
            ast::CompoundCommand::Coprocess(coprocess) => self.command(&coprocess.body, depth),
        }
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr, depth: usize) {
        match expr {
            ast::ExtendedTestExpr::And(left, right) | ast::ExtendedTestExpr::Or(left, right) => {
                self.extended_test(left, depth);
                self.extended_test(right, depth);
            }
            ast::ExtendedTestExpr::Not(inner) | ast::ExtendedTestExpr::Parenthesized(inner) => {
                self.extended_test(inner, depth);
            }
            ast::ExtendedTestExpr::UnaryTest(predicate, word) => {
                let name = self.word(&word.value, depth);
                if matches!(
                    predicate,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                ) && !name.literal
                {
                    // `[[ -v $x ]]` evaluates the name's subscript, whatever it holds.
                    self.opaque("[[ -v ]] tests a name built when the line runs");
                }
            }
            ast::ExtendedTestExpr::BinaryTest(predicate, left, right) => {
                let left = self.word(&left.value, depth);
                let right = self.word(&right.value, depth);
                if matches!(
                    predicate,
                    ast::BinaryPredicate::ArithmeticEqualTo
                        | ast::BinaryPredicate::ArithmeticNotEqualTo
                        | ast::BinaryPredicate::ArithmeticLessThan
                        | ast::BinaryPredicate::ArithmeticLessThanOrEqualTo
                        | ast::BinaryPredicate::ArithmeticGreaterThan
                        | ast::BinaryPredicate::ArithmeticGreaterThanOrEqualTo
                ) {
                    // `[[ 1 -eq PATH=5 ]]` evaluates its operands as arithmetic.
                    self.arithmetic(&left.text);
                    self.arithmetic(&right.text);
                }
            }
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, depth: usize) {
        let mut sub = Subcommand::default();
        let mut items: Vec<&ast::CommandPrefixOrSuffixItem> = Vec::new();
        if let Some(prefix) = &simple.prefix {
            items.extend(prefix.0.iter());
        }
        let program = simple.word_or_name.as_ref();
        let mut seen_program = false;
        for item in &items {
            self.item(item, &mut sub, seen_program, depth);
        }
        if let Some(word) = program {
            seen_program = true;
            let word = self.word(&word.value, depth);
            sub.words.push(word);
        }
        if let Some(suffix) = &simple.suffix {
            for item in &suffix.0 {
                self.item(item, &mut sub, seen_program, depth);
            }
        }
        if sub.words.iter().any(|word| named_fd(&word.text)) {
            // `{PATH}>/dev/null` assigns PATH the descriptor's number.
            self.opaque("a redirection assigns a named descriptor variable");
        }
        self.variables_built(&sub);
        self.nested_shell(&sub, depth);
        self.subcommands.push(sub);
    }

    fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        sub: &mut Subcommand,
        seen_program: bool,
        depth: usize,
    ) {
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => {
                let found = self.redirects(std::slice::from_ref(redirect), depth);
                sub.redirects.extend(found);
            }
            ast::CommandPrefixOrSuffixItem::Word(word) => {
                let word = self.word(&word.value, depth);
                sub.words.push(word);
            }
            ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                self.assignment_value(&assignment.value, depth);
                if seen_program {
                    // `declare X=1`: an ordinary argument.
                    let word = self.word(&word.value, depth);
                    sub.words.push(word);
                } else {
                    sub.assignments.push(match &assignment.name {
                        ast::AssignmentName::VariableName(name) => name.clone(),
                        ast::AssignmentName::ArrayElementName(name, index) => {
                            // The subscript is evaluated: `a[$(cmd)]=1` runs cmd.
                            self.word(index, depth);
                            self.arithmetic(index);
                            name.clone()
                        }
                    });
                }
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
                self.compound_list(&subshell.list, depth + 1);
                sub.words.push(ShellWord {
                    text: "<(...)".to_owned(),
                    literal: false,
                    glob: false,
                    tilde: false,
                });
            }
        }
    }

    fn assignment_value(&mut self, value: &ast::AssignmentValue, depth: usize) {
        match value {
            ast::AssignmentValue::Scalar(word) => {
                if built_at_run_time(&word.value) {
                    self.built_values = true;
                }
                self.word(&word.value, depth);
            }
            ast::AssignmentValue::Array(elements) => {
                for (key, value) in elements {
                    if let Some(key) = key {
                        self.word(&key.value, depth);
                    }
                    self.word(&value.value, depth);
                }
            }
        }
    }

    fn redirects(&mut self, redirects: &[ast::IoRedirect], depth: usize) -> Vec<Redirect> {
        let mut found = Vec::new();
        for redirect in redirects {
            match redirect {
                ast::IoRedirect::File(_, kind, target) => match target {
                    ast::IoFileRedirectTarget::Filename(word) => {
                        let write = !matches!(kind, ast::IoFileRedirectKind::Read);
                        let target = self.word(&word.value, depth);
                        found.push(Redirect { target, write });
                    }
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, subshell) => {
                        self.compound_list(&subshell.list, depth + 1);
                    }
                    ast::IoFileRedirectTarget::Duplicate(word) => {
                        let target = self.word(&word.value, depth);
                        // `>&file` writes to a file unless the target is a descriptor number.
                        let descriptor = target.literal
                            && (target.text == "-"
                                || target.text.trim_end_matches('-').parse::<u32>().is_ok());
                        if !descriptor {
                            found.push(Redirect {
                                target,
                                write: true,
                            });
                        }
                    }
                    ast::IoFileRedirectTarget::Fd(_) => {}
                },
                ast::IoRedirect::HereDocument(_, here) => {
                    let tag: String = here
                        .here_end
                        .value
                        .chars()
                        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                        .collect();
                    let joined_lines = here.requires_expansion && here.doc.value.contains("\\\n");
                    let tag_prefixed = here
                        .doc
                        .value
                        .lines()
                        .any(|line| line.len() > tag.len() && line.starts_with(tag.as_str()));
                    if joined_lines || tag_prefixed {
                        // bash joins backslash-newlines before comparing lines with the delimiter;
                        // a line that starts with it may end the document in bash.
                        self.opaque("a here-document's end cannot be placed with certainty");
                    }
                    if here.here_end.value.contains("$'") || here.here_end.value.contains("$\"") {
                        // bash decodes `$'EOF'` before comparing lines, brush-parser does not: the
                        // two would disagree on where the document ends.
                        self.opaque("a here-document delimiter is $-quoted");
                    }
                    if here.requires_expansion {
                        match guarded(|| {
                            brush_parser::word::parse_heredoc(&here.doc.value, &parser_options())
                        }) {
                            Ok(pieces) => {
                                let mut ignored = ShellWord::default();
                                self.pieces(&pieces, &here.doc.value, &mut ignored, depth);
                            }
                            Err(_) => self.opaque("a here-document cannot be parsed"),
                        }
                    }
                }
                ast::IoRedirect::HereString(_, word) => {
                    self.word(&word.value, depth);
                }
                ast::IoRedirect::OutputAndError(word, _) => {
                    let target = self.word(&word.value, depth);
                    found.push(Redirect {
                        target,
                        write: true,
                    });
                }
            }
        }
        found
    }

    /// Unquotes `source`, walking into any command substitution it holds.
    fn word(&mut self, source: &str, depth: usize) -> ShellWord {
        let mut word = ShellWord {
            literal: true,
            ..ShellWord::default()
        };
        match guarded(|| brush_parser::word::parse(source, &parser_options())) {
            Ok(pieces) => self.pieces(&pieces, source, &mut word, depth),
            Err(_) => {
                self.opaque(format!("the word {source:?} cannot be parsed"));
                word.text = source.to_owned();
                word.literal = false;
            }
        }
        if brace_expansion(source) {
            // `{-exec,rm,x}` becomes several words when bash runs it (a quoted brace is flagged
            // too: that only costs a question).
            word.glob = true;
            word.literal = false;
        }
        if word.text.contains('[') && (word.text.contains("$(") || word.text.contains('`')) {
            // Quoted text such as 'a[$(cmd)]' runs cmd when a builtin (`[[ -v ]]`, `test -v`,
            // `printf -v`, `read`, `declare`, arithmetic) evaluates it as an array subscript.
            self.opaque("a word holds an array subscript with a command substitution");
        }
        word
    }

    fn pieces(
        &mut self,
        pieces: &[WordPieceWithSource],
        source: &str,
        word: &mut ShellWord,
        depth: usize,
    ) {
        for (index, piece) in pieces.iter().enumerate() {
            let spelled = source
                .get(piece.start_index..piece.end_index)
                .unwrap_or_default();
            match &piece.piece {
                WordPiece::Text(text) => {
                    if text.contains(['*', '?', '[']) {
                        word.glob = true;
                    }
                    if text.contains('\n') {
                        // An unquoted newline inside a word: a substitution was cut short.
                        self.opaque("a word holds an unquoted newline");
                    }
                    if text.contains("$[") {
                        self.opaque("a legacy $[...] arithmetic expansion");
                        self.arithmetic(text);
                    }
                    if brace_expansion(text) {
                        // `{rm,-rf,/}` becomes three words when bash runs it.
                        word.glob = true;
                        word.literal = false;
                    }
                    word.text.push_str(text);
                }
                WordPiece::SingleQuotedText(text) => word.text.push_str(text),
                WordPiece::AnsiCQuotedText(text) => word.text.push_str(&ansi_c_unquote(text)),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    // Inner indices are relative to the same source string.
                    let glob = word.glob;
                    self.pieces(inner, source, word, depth);
                    word.glob = glob;
                }
                WordPiece::TildeExpansion(tilde) => {
                    if index == 0 {
                        word.tilde = true;
                    }
                    match tilde {
                        TildeExpr::Home => word.text.push('~'),
                        _ => {
                            word.text.push_str(spelled);
                            word.literal = false;
                        }
                    }
                }
                WordPiece::EscapeSequence(escaped) => {
                    // A backslash-newline is a line continuation: nothing.
                    let unescaped = escaped.strip_prefix('\\').unwrap_or(escaped);
                    if unescaped != "\n" {
                        word.text.push_str(unescaped);
                    }
                }
                WordPiece::CommandSubstitution(inner) => {
                    if heredoc_tag_misuse(inner) {
                        self.opaque(
                            "a here-document inside a substitution ends where bash and the parser disagree",
                        );
                    }
                    self.program(inner, depth + 1);
                    word.text.push_str(spelled);
                    word.literal = false;
                }
                WordPiece::BackquotedCommandSubstitution(inner) => {
                    // Inside backquotes bash removes the backslash of `\$`, `\\` and `\``.
                    let unescaped = inner
                        .replace("\\\\", "\u{0}")
                        .replace("\\$", "$")
                        .replace("\\`", "`")
                        .replace('\u{0}', "\\");
                    if unescaped != *inner {
                        self.opaque("a backquoted command holds escapes bash removes");
                    }
                    self.program(&unescaped, depth + 1);
                    word.text.push_str(spelled);
                    word.literal = false;
                }
                WordPiece::ParameterExpansion(_) => {
                    if spelled.contains("$(") || spelled.contains('`') || spelled.contains("<(") {
                        self.opaque("a parameter expansion holds a command substitution");
                    }
                    if spelled.contains(['[', ':', '=']) && assigns_environment(spelled) {
                        // `${X:=v}`, `${a[PATH=5]}`, `${x:PATH=5}` assign.
                        self.opaque("a parameter expansion assigns an environment-style variable");
                    }
                    if spelled.starts_with("${!")
                        || spelled.contains("@P}")
                        || spelled.contains("@E}")
                    {
                        // Indirection and prompt expansion evaluate a variable's value as code.
                        self.opaque("a parameter expansion evaluates a value indirectly");
                    }
                    word.text.push_str(spelled);
                    word.literal = false;
                }
                WordPiece::ArithmeticExpression(expr) => {
                    self.arithmetic(&expr.value);
                    word.text.push_str(spelled);
                    word.literal = false;
                }
            }
        }
    }

    fn arithmetic(&mut self, expr: &str) {
        if expr.chars().any(|c| c.is_ascii_alphabetic() || c == '_') {
            self.arithmetic_names = true;
        }
        if expr.contains("$(") || expr.contains('`') {
            self.opaque("an arithmetic expression holds a command substitution");
        }
        if unclosed(expr, '[', ']') > 0 {
            // bash rejects it, and brush-parser's arithmetic grammar backtracks exponentially.
            self.opaque("an arithmetic expression leaves a subscript unclosed");
            return;
        }
        if subscript_depth(expr) > MAX_SUBSCRIPT_DEPTH {
            self.opaque("an arithmetic expression nests subscripts too deeply to be checked");
            return;
        }
        let parses = guarded(|| brush_parser::arithmetic::parse(expr)).is_ok();
        if !parses {
            // `( (cmd) )` and `"$((cmd) ))"` parse as arithmetic in brush-parser but run as
            // commands in bash: what is not arithmetic is read as a command line too.
            self.opaque("an arithmetic expression does not parse as arithmetic");
            self.program(expr, MAX_NESTING);
        }
        if assigns_environment(expr) {
            self.opaque("an arithmetic expression assigns an environment-style variable");
        }
    }

    /// Builtins that give a variable a value only known when the line runs (`printf -v`,
    /// `read`, `mapfile`, `getopts`), and `test -v`/`[ -v` of a name built when it runs (its
    /// subscript is evaluated).
    fn variables_built(&mut self, sub: &Subcommand) {
        let Some((program, args)) = sub.words.split_first() else {
            return;
        };
        let sets = match program.text.as_str() {
            "printf" => args.iter().any(|word| word.text.starts_with("-v")),
            "read" | "mapfile" | "readarray" | "getopts" => true,
            "declare" | "typeset" | "local" | "export" | "readonly" => {
                args.iter().any(|word| built_at_run_time(&word.text))
            }
            _ => false,
        };
        if sets {
            self.built_values = true;
        }
        if matches!(program.text.as_str(), "test" | "[")
            && args
                .windows(2)
                .any(|pair| pair[0].text == "-v" && !pair[1].literal)
        {
            self.opaque("test -v tests a name built when the line runs");
        }
        if program.text == "let" {
            self.arithmetic_names = true;
        }
    }

    /// Programs that run what is only known when they run: a program word built by an expansion
    /// (`$(echo rm) x`, `r${U}m`, `$c`), behind the wrappers allow rules look through; `BASH_ENV`
    /// or `ENV` set for a shell. (`source FILE` and `sh FILE` are read from disk where the line's
    /// files are placed: `programs.rs`.)
    fn dynamic_program(&mut self, sub: &Subcommand) {
        let mut words = &sub.words[..];
        while let Some(rest) = super::bash::strip_one_wrapper(words) {
            words = rest;
        }
        let Some(program) = words.first() else {
            return;
        };
        if !program.literal {
            self.opaque(format!(
                "the program word {} is only known when it runs",
                program.text
            ));
        } else if let Some(name) = sub
            .assignments
            .iter()
            .find(|name| matches!(name.as_str(), "BASH_ENV" | "ENV"))
        {
            self.opaque(format!(
                "{name} makes a shell run the commands of a file first"
            ));
        }
    }

    /// `bash -c 'STRING'`, `sh -c`, `eval STRING` anywhere in the words (behind wrappers too): the
    /// string is a command line as well, and so are the strings of `script -c`, `env -S`,
    /// `trap`, an `alias` value and the program `hash -p` binds. A shell reading its commands from
    /// stdin is opaque.
    fn nested_shell(&mut self, sub: &Subcommand, depth: usize) {
        self.dynamic_program(sub);
        for (at, word) in sub.words.iter().enumerate() {
            let name = word.text.rsplit('/').next().unwrap_or_default();
            let rest = &sub.words[at + 1..];
            match name {
                "bash" | "sh" | "zsh" | "dash" | "ksh" | "ash" => {
                    let Some(flag) = rest.iter().position(|word| {
                        word.text.starts_with('-')
                            && !word.text.starts_with("--")
                            && word.text.contains('c')
                    }) else {
                        let script = rest.iter().any(|word| !word.text.starts_with('-'));
                        let first = sub.words[0].text.rsplit('/').next().unwrap_or_default();
                        let runs_it = at == 0
                            || STRIPPED_WRAPPERS.contains(&first)
                            || EXEC_WRAPPERS.contains(&first);
                        if runs_it && !script {
                            self.opaque(format!("{name} reads its commands from stdin"));
                        }
                        continue;
                    };
                    let script = rest[flag + 1..]
                        .iter()
                        .find(|word| !word.text.starts_with('-') || !word.literal);
                    match script {
                        Some(script) if script.literal => {
                            self.program(&script.text, depth + 1);
                        }
                        _ => {
                            self.opaque(format!("{name} runs a command string that cannot be read"))
                        }
                    }
                }
                "eval" => {
                    if rest.iter().all(|word| word.literal) {
                        self.program(&join(rest), depth + 1);
                    } else {
                        self.opaque("eval runs a command string that cannot be read");
                    }
                }
                "script" | "env" | "trap" | "alias" | "hash" | "mapfile" | "readarray" => {
                    for string in code_strings(name, rest) {
                        match string {
                            Some(code) => self.program(&code, depth + 1),
                            None => self.opaque(format!(
                                "{name} runs a command string that cannot be read"
                            )),
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// The strings `name` runs as command lines: `script -c S` (`--command`), `env -S S`
/// (`--split-string`), `trap S SIGNAL...`, `alias NAME=S`, and the program path of `hash -p PATH
/// NAME`. `None` for a string only known when it runs.
fn code_strings(name: &str, args: &[ShellWord]) -> Vec<Option<String>> {
    let readable = |word: &ShellWord| word.literal.then(|| word.text.clone());
    let mut found = Vec::new();
    match name {
        "script" | "env" => {
            let (short, long) = if name == "script" {
                ("-c", "--command")
            } else {
                ("-S", "--split-string")
            };
            let letter = short.trim_start_matches('-');
            for (at, word) in args.iter().enumerate() {
                let text = word.text.as_str();
                if text == long {
                    found.push(args.get(at + 1).and_then(readable));
                } else if let Some(value) = text.strip_prefix(&format!("{long}=")) {
                    found.push(word.literal.then(|| value.to_owned()));
                } else if let Some(bundle) = text.strip_prefix('-').filter(|b| !b.starts_with('-'))
                    && let Some(position) = bundle.find(letter)
                {
                    // `-c S`, `-qc S` (a bundle ending in the letter), `-cS` / `-qcS` (the value
                    // attached after it).
                    let attached = &bundle[position + letter.len()..];
                    if attached.is_empty() {
                        found.push(args.get(at + 1).and_then(readable));
                    } else {
                        found.push(word.literal.then(|| attached.to_owned()));
                    }
                }
            }
        }
        "trap" => {
            // `trap -- STRING SIGNAL...` is `trap STRING SIGNAL...`.
            let args = match args.first() {
                Some(first) if first.text == "--" => &args[1..],
                _ => args,
            };
            if let Some(first) = args.first()
                && !matches!(first.text.as_str(), "-" | "-p" | "-l" | "--" | "")
            {
                found.push(readable(first));
            }
        }
        "mapfile" | "readarray" => {
            // `-C CALLBACK` runs CALLBACK (with arguments appended) every `-c` lines.
            for (at, word) in args.iter().enumerate() {
                if word.text == "-C" {
                    found.push(args.get(at + 1).and_then(readable));
                } else if let Some(callback) = word.text.strip_prefix("-C") {
                    found.push(word.literal.then(|| callback.to_owned()));
                }
            }
        }
        "alias" => {
            for word in args {
                if let Some((_, value)) = word.text.split_once('=') {
                    found.push(word.literal.then(|| value.to_owned()));
                }
            }
        }
        "hash" => {
            if let Some(at) = args.iter().position(|word| word.text == "-p") {
                found.push(args.get(at + 1).and_then(readable));
            }
        }
        _ => {}
    }
    found
}

/// True when an assignment's value is built when the line runs from more than numbers: a
/// command substitution or another variable (`$((…))` alone is a number).
fn built_at_run_time(value: &str) -> bool {
    let without_arithmetic = value.replace("$((", "");
    without_arithmetic.contains("$(")
        || without_arithmetic.contains('`')
        || without_arithmetic
            .split('$')
            .skip(1)
            .any(|rest| rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '{'))
}

/// Runs a brush-parser call so that a panic inside it (its word cache sits behind a lock, and the
/// crate allows `unwrap`) becomes a parse failure instead of taking the host down.
fn guarded<T, E>(parse: impl FnOnce() -> Result<T, E>) -> Result<T, ()> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(parse)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(_)) | Err(_) => Err(()),
    }
}

fn parser_options() -> brush_parser::ParserOptions {
    brush_parser::ParserOptions {
        // `bash -c` runs with extglob off, so `!(cmd)` is a negated subshell, not a pattern.
        enable_extended_globbing: false,
        posix_mode: false,
        sh_mode: false,
        tilde_expansion_at_word_start: true,
        tilde_expansion_after_colon: false,
        parser_impl: brush_parser::ParserImpl::Peg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(command: &str) -> Vec<String> {
        split(command)
            .subcommands
            .iter()
            .map(Subcommand::text)
            .collect()
    }

    #[test]
    fn splits_on_every_operator() {
        let cases: &[(&str, &[&str])] = &[
            ("ls -la", &["ls -la"]),
            ("a && b", &["a", "b"]),
            ("a || b", &["a", "b"]),
            ("a; b", &["a", "b"]),
            ("a | b", &["a", "b"]),
            ("a |& b", &["a", "b"]),
            ("a & b", &["a", "b"]),
            ("a\nb", &["a", "b"]),
            ("echo $(rm -rf /)", &["rm -rf /", "echo $(rm -rf /)"]),
            ("echo `whoami`", &["whoami", "echo `whoami`"]),
            (
                "diff <(ls a) <(ls b)",
                &["ls a", "ls b", "diff <(...) <(...)"],
            ),
            ("(cd x && make)", &["cd x", "make"]),
            ("{ a; b; }", &["a", "b"]),
            ("if a; then b; else c; fi", &["a", "b", "c"]),
            ("for f in $(ls); do rm $f; done", &["ls", "rm $f"]),
            ("while true; do x; done", &["true", "x"]),
            ("bash -c 'rm -rf /'", &["rm -rf /", "bash -c rm -rf /"]),
            ("eval 'ls; rm x'", &["ls", "rm x", "eval ls; rm x"]),
        ];
        for (command, expected) in cases {
            assert_eq!(texts(command), *expected, "{command}");
            assert_eq!(split(command).opaque, None, "{command}");
        }
    }

    #[test]
    fn quoting_is_removed() {
        let cases: &[(&str, &[&str])] = &[
            ("\"rm\" -rf /", &["rm -rf /"]),
            ("r\\m -rf /", &["rm -rf /"]),
            ("echo 'a  b'", &["echo a  b"]),
            ("git   log", &["git log"]),
            ("git log \"; rm -rf /\"", &["git log ; rm -rf /"]),
        ];
        for (command, expected) in cases {
            assert_eq!(texts(command), *expected, "{command}");
        }
    }

    #[test]
    fn assignments_and_redirects_are_separated() {
        let parsed = split("FOO=1 BAR=2 npm test > out.txt 2>&1");
        let sub = &parsed.subcommands[0];
        assert_eq!(sub.assignments, ["FOO", "BAR"]);
        assert_eq!(sub.text(), "npm test");
        assert_eq!(sub.redirects.len(), 1);
        assert_eq!(sub.redirects[0].target.text, "out.txt");
        assert!(sub.redirects[0].write);
        let read = split("wc -l < input.txt");
        assert!(!read.subcommands[0].redirects[0].write);
        let group = split("{ a; b; } > all.txt");
        assert!(group.subcommands.iter().all(|s| s.redirects.len() == 1));
    }

    #[test]
    fn unparseable_long_and_deep_commands_are_opaque() {
        for command in [
            "echo 'unterminated",
            "if then fi",
            &"x".repeat(MAX_COMMAND_CHARS + 1),
            &format!("{}x{}", "$(".repeat(200), ")".repeat(200)),
            // Brackets taken back by `]]` no longer hide nesting; keywords count too.
            &format!("echo {}x{}", "$((]] ".repeat(40), " ) )".repeat(40)),
            &format!("{}true{}", "if a;then ".repeat(700), " fi".repeat(700)),
            // Found by fuzzing: unclosed parentheses over two lines made the parser backtrack
            // for minutes.
            &format!("{0} a\n{0} a", "(".repeat(17)),
            &format!("{0} a&&{0} a", "(".repeat(17)),
            // Found by fuzzing: the parser unwraps an overflowing descriptor number.
            "55555555555555555555559<<<OF",
            "echo hi 2147483648>out",
            // Found by fuzzing: the tokenizer looped forever, allocating, on this delimiter.
            "i$(\nho /<<  $(",
            "cat <<",
            "<<\"\" ",
            "cat <<'' x",
            "x=$*<<<<<\r<<<<(21i))F ",
            "cat <<E$x\nE$x",
            "cat <<od\r\rF$(\r\r ",
            "*F;<<E\\&e\\&e$[  ",
            "cat << `x`\nx\n`x`",
            // Found by fuzzing: each unclosed or nested `name[` in arithmetic multiplied the
            // parse time by about ten.
            &format!("(({}))", "a[".repeat(9)),
            &format!("echo $[{}]", "o[".repeat(12)),
            &format!("echo $(({}1{}))", "a[".repeat(8), "]".repeat(8)),
            &format!("x[{}1{}]=1", "a[".repeat(4), "]".repeat(4)),
            "cat <<EOF\n\"${F[$\"${F[ \"${F[$\nEOF",
            "<<EOF\n=$($(~${v[=$(\n$({F${x+(${vvvv[^'\\'vvvvvvvvvx\nEOF",
            "echo ${x:-$(rm -rf /)}",
            "bash -c \"$CMD\"",
            // Five levels of `$(`: each `$((` is tried as arithmetic and as a subshell.
            "echo $(a $(b $(c $(d $(e)))))",
            "x=$(((1+$(((2+$(((3+$(((4+$(((5)))))))))))))))",
        ] {
            assert!(
                split(command).opaque.is_some(),
                "{}",
                &command[..command.len().min(40)]
            );
        }
    }

    #[test]
    fn shallow_subscripts_and_bracket_expressions_still_split() {
        for (command, expected) in [
            ("[[ $x =~ ^[[:alpha:][:digit:]]+$ ]] && rm a", "rm a"),
            ("echo ${a[b[1]]} && rm b", "rm b"),
            ("ls [ab]*.txt && rm c", "rm c"),
            ("cat <<'EOF' > f && rm d\nbody\nEOF", "rm d"),
            ("cat <<-\"END-1\" && rm e\nbody\nEND-1", "rm e"),
            ("cat <<< \"$x\" && rm f", "rm f"),
            (
                "echo $(dirname $(dirname $(pwd))) $((1 + 2)) && rm g",
                "rm g",
            ),
            ("echo \"\\$(\\$(\\$(\\$(\\$(\" && rm h", "rm h"),
        ] {
            let split = split(command);
            assert_eq!(split.opaque, None, "{command}");
            assert_eq!(
                split.subcommands.last().map(Subcommand::text).as_deref(),
                Some(expected)
            );
        }
    }

    #[test]
    fn bash_spellings_are_read_as_bash_reads_them() {
        let cases: &[(&str, &[&str])] = &[
            ("$'r\\x6d' -rf /", &["rm -rf /"]),
            ("$'\\162\\155' x", &["rm x"]),
            ("$'a\\'b'", &["a'b"]),
            ("r\\\nm -rf /", &["rm -rf /"]),
        ];
        for (command, expected) in cases {
            assert_eq!(texts(command), *expected, "{command:?}");
        }
        let braces = split("{rm,-rf,/}");
        assert!(!braces.subcommands[0].words[0].literal);
    }

    #[test]
    fn dynamic_words_are_not_literal() {
        let parsed = split("$CMD arg ~/x *.txt");
        let words = &parsed.subcommands[0].words;
        assert!(!words[0].literal);
        assert!(words[1].literal);
        assert!(words[2].tilde && words[2].literal);
        assert!(words[3].glob);
    }
}
