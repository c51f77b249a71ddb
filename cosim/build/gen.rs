//! Code generation of the build script: from each exported block's port list, the C++
//! shim around its Verilated model and the Rust types and trait impls of both backends.
//!
//! Port representation (identical on both sides of the C ABI, checked at compile time on
//! both sides against the layout computed here):
//!
//! | width   | Rust        | C++              | Verilator signal |
//! |---------|-------------|------------------|------------------|
//! | 1       | `bool`      | `bool`           | `CData`          |
//! | 2..=8   | `u8`        | `uint8_t`        | `CData`          |
//! | 9..=16  | `u16`       | `uint16_t`       | `SData`          |
//! | 17..=32 | `u32`       | `uint32_t`       | `IData`          |
//! | 33..=64 | `u64`       | `uint64_t`       | `QData`          |
//! | > 64    | `[u64; N]`  | `uint64_t[N]`    | `VlWide<W>` (32-bit words) |
//!
//! Word arrays are little-endian by word: word 0 holds bits 63:0.

use crate::tool::BuildError;
use std::fmt::Write as _;

/// Bump when the generated C++ or Rust changes shape (part of the model stamps).
pub const GENERATOR_VERSION: u32 = 2;

/// Clock period of both backends' traces, in ps (timescale 1 ps).
pub const CYCLE_PS: u64 = 10_000;

/// How one port is carried across the C ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repr {
    Bool,
    U8,
    U16,
    U32,
    U64,
    /// `N` 64-bit words.
    Words(usize),
}

impl Repr {
    pub fn of_width(width: usize) -> Repr {
        match width {
            1 => Repr::Bool,
            2..=8 => Repr::U8,
            9..=16 => Repr::U16,
            17..=32 => Repr::U32,
            33..=64 => Repr::U64,
            w => Repr::Words(w.div_ceil(64)),
        }
    }
    pub fn rust(self) -> String {
        match self {
            Repr::Bool => "bool".into(),
            Repr::U8 => "u8".into(),
            Repr::U16 => "u16".into(),
            Repr::U32 => "u32".into(),
            Repr::U64 => "u64".into(),
            Repr::Words(n) => format!("[u64; {n}]"),
        }
    }
    fn c_decl(self, name: &str) -> String {
        match self {
            Repr::Bool => format!("bool {name}"),
            Repr::U8 => format!("uint8_t {name}"),
            Repr::U16 => format!("uint16_t {name}"),
            Repr::U32 => format!("uint32_t {name}"),
            Repr::U64 => format!("uint64_t {name}"),
            Repr::Words(n) => format!("uint64_t {name}[{n}]"),
        }
    }
    fn size_align(self) -> (usize, usize) {
        match self {
            Repr::Bool | Repr::U8 => (1, 1),
            Repr::U16 => (2, 2),
            Repr::U32 => (4, 4),
            Repr::U64 => (8, 8),
            Repr::Words(n) => (8 * n, 8),
        }
    }
}

#[derive(Clone, Debug)]
pub struct PortSpec {
    pub name: String,
    pub width: usize,
    pub repr: Repr,
}

/// One block as the generator sees it.
#[derive(Clone, Debug)]
pub struct BlockSpec {
    /// Short name, `cell_segmenter`.
    pub name: String,
    /// Verilog module and Verilator prefix base, `nic_cell_segmenter`.
    pub module: String,
    /// CamelCase of `name`, the stem of every generated type: `CellSegmenter`.
    pub camel: String,
    pub verilog: String,
    pub rust_type: String,
    pub rust_constructor: String,
    /// Whether the block has a `clock` input; a block without one is combinational
    /// (its "cycle" is: apply the inputs, settle, sample).
    pub has_clock: bool,
    /// Input ports except `clock`, in Verilog order.
    pub inputs: Vec<PortSpec>,
    pub outputs: Vec<PortSpec>,
}

/// Byte offsets of the fields and the size of a `#[repr(C)]` struct of `ports`.
pub fn layout(ports: &[PortSpec]) -> (Vec<usize>, usize) {
    let mut offsets = vec![];
    let mut off = 0usize;
    let mut max_align = 1usize;
    for p in ports {
        let (size, align) = p.repr.size_align();
        off = off.div_ceil(align) * align;
        offsets.push(off);
        off += size;
        max_align = max_align.max(align);
    }
    (offsets, off.div_ceil(max_align) * max_align)
}

/// Identifiers a port may not have: Rust and C++ keywords (the generated structs use the
/// port names as field names on both sides), and the shim's own names.
const RESERVED: &[&str] = &[
    // Rust
    "as",
    "async",
    "await",
    "break",
    "const",
    "continue",
    "crate",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "self",
    "Self",
    "static",
    "struct",
    "super",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    "abstract",
    "become",
    "box",
    "do",
    "final",
    "macro",
    "override",
    "priv",
    "typeof",
    "unsized",
    "virtual",
    "yield",
    "try",
    "gen",
    // C++ (beyond the above)
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "case",
    "catch",
    "char",
    "class",
    "compl",
    "concept",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "double",
    "dynamic_cast",
    "explicit",
    "export",
    "float",
    "friend",
    "goto",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "short",
    "signed",
    "sizeof",
    "static_assert",
    "static_cast",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "void",
    "volatile",
    "wchar_t",
    "xor",
    "xor_eq",
];

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `cell_segmenter` -> `CellSegmenter`, `crc32` -> `Crc32`.
pub fn camel_case(name: &str) -> String {
    name.split('_')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let mut c = s.chars();
            match c.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

impl BlockSpec {
    /// Check one exported block where it enters the generator.
    pub fn new(
        name: &str,
        module: &str,
        verilog: &str,
        ports: &[(String, bool, usize)],
        rust_type: &str,
        rust_constructor: &str,
    ) -> Result<BlockSpec, BuildError> {
        let bad = |msg: String| {
            Err(BuildError::Invalid(format!(
                "exported block `{name}` (module `{module}`): {msg}"
            )))
        };
        if !is_identifier(name) || name.starts_with('_') {
            return bad("the block name must be a snake_case identifier".into());
        }
        if !is_identifier(module) {
            return bad("the module name must be an identifier".into());
        }
        let clocks = ports.iter().filter(|(n, _, _)| n == "clock").count();
        let has_clock = clocks == 1;
        if clocks > 1
            || ports
                .iter()
                .any(|(n, input, w)| n == "clock" && !(*input && *w == 1))
        {
            return bad("its clock must be one 1-bit input port `clock` (the RustHDL `Signal<In, Clock>` field), or none for a combinational block".into());
        }
        let mut inputs = vec![];
        let mut outputs = vec![];
        for (port, input, width) in ports {
            if port == "clock" {
                if !input {
                    return bad("`clock` must be an input".into());
                }
                continue;
            }
            if !is_identifier(port) || RESERVED.contains(&port.as_str()) || port.starts_with("__") {
                return bad(format!(
                    "port `{port}` cannot be a field name in Rust and C++ (keyword or not an identifier): rename the RustHDL field"
                ));
            }
            if *width == 0 {
                return bad(format!("port `{port}` has width 0"));
            }
            if ports.iter().filter(|(n, _, _)| n == port).count() != 1 {
                return bad(format!("port `{port}` is listed twice"));
            }
            let spec = PortSpec {
                name: port.clone(),
                width: *width,
                repr: Repr::of_width(*width),
            };
            if *input {
                inputs.push(spec);
            } else {
                outputs.push(spec);
            }
        }
        Ok(BlockSpec {
            name: name.into(),
            module: module.into(),
            camel: camel_case(name),
            verilog: verilog.into(),
            rust_type: rust_type.into(),
            rust_constructor: rust_constructor.into(),
            has_clock,
            inputs,
            outputs,
        })
    }

    /// Verilator's model class (`--prefix`).
    pub fn prefix(&self) -> String {
        format!("V{}", self.module)
    }

    /// Stem of the shim's C functions: `cosim_nic_crc32`.
    fn c_stem(&self) -> String {
        format!("cosim_{}", self.module)
    }
}

/// Mask of the low `width` bits of a 64-bit value, as a Rust/C++ literal.
fn mask64(width: usize) -> String {
    if width >= 64 {
        "0xFFFF_FFFF_FFFF_FFFF".into()
    } else {
        format!("{:#x}", (1u64 << width) - 1)
    }
}

// ---------------------------------------------------------------------------------------
// C++ shim
// ---------------------------------------------------------------------------------------

fn c_struct(out: &mut String, name: &str, ports: &[PortSpec]) {
    let (offsets, size) = layout(ports);
    writeln!(out, "struct {name} {{").unwrap();
    for p in ports {
        writeln!(
            out,
            "    {};  // {} bit(s)",
            p.repr.c_decl(&p.name),
            p.width
        )
        .unwrap();
    }
    writeln!(out, "}};").unwrap();
    for (p, off) in ports.iter().zip(&offsets) {
        writeln!(
            out,
            "static_assert(offsetof({name}, {}) == {off}, \"{name}::{} is not where the Rust #[repr(C)] struct has it\");",
            p.name, p.name
        )
        .unwrap();
    }
    if !ports.is_empty() {
        writeln!(out, "static_assert(sizeof({name}) == {size}, \"{name} differs in size from the Rust #[repr(C)] struct\");")
            .unwrap();
    }
}

/// The trace format a Verilator model is built for (`--trace` or `--trace-fst`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    Vcd,
    Fst,
}

impl TraceFormat {
    /// What the model's class, directory and shim functions add to the block's names.
    pub fn suffix(self) -> &'static str {
        match self {
            TraceFormat::Vcd => "",
            TraceFormat::Fst => "_fst",
        }
    }
    /// Verilator's option.
    pub fn flag(self) -> &'static str {
        match self {
            TraceFormat::Vcd => "--trace",
            TraceFormat::Fst => "--trace-fst",
        }
    }
}

/// The C++ shim of one block's model for `format`:
/// `cosim_<module>[_fst]_{new,free,step,trace_open,trace_close,set_cycle,markers,mark}`.
///
/// Marker signals: `markers` declares up to 64 one-bit signals (scope `markers`) for the
/// traces opened after it; `mark` sets them after the last step and dumps them just after
/// that step's rising edge (1 ps later), so that an event the caller learns of from the
/// cycle's outputs lands on the edge that produced it.
pub fn cpp_shim(b: &BlockSpec, format: TraceFormat) -> String {
    let v = format!("{}{}", b.prefix(), format.suffix());
    let c = format!("{}{}", b.c_stem(), format.suffix());
    let (header, writer, tracer, decl_args) = match format {
        TraceFormat::Vcd => (
            "verilated_vcd_c.h",
            "VerilatedVcdC",
            "VerilatedVcd",
            "false, -1",
        ),
        TraceFormat::Fst => (
            "verilated_fst_c.h",
            "VerilatedFstC",
            "VerilatedFst",
            "-1, FST_VD_IMPLICIT, FST_VT_VCD_WIRE, false, -1",
        ),
    };
    let half = CYCLE_PS / 2;
    // A combinational block (no `clock` port) is only evaluated.
    let (clock_low, t_clock_low, t_clock_high) = if b.has_clock {
        ("m->top->clock = 0;", "t->clock = 0;", "t->clock = 1;")
    } else {
        ("", "", "")
    };
    let mut s = String::new();
    writeln!(
        s,
        "// @generated by nic-cosim/build.rs from the ports of block `{}` (module `{}`); do not edit.\n\
         // C ABI of one Verilated instance; see cosim/build/gen.rs for the port representation.\n\
         #include \"{v}.h\"\n#include \"verilated.h\"\n#include \"{header}\"\n\
         #include <cstddef>\n#include <cstdint>\n#include <memory>\n#include <string>\n#include <vector>\n",
        b.name, b.module
    )
    .unwrap();
    s.push_str("namespace {\n\n");
    c_struct(&mut s, "Inputs", &b.inputs);
    s.push('\n');
    c_struct(&mut s, "Outputs", &b.outputs);
    writeln!(
        s,
        "
struct Model {{
    // Declared so that they are destroyed trace first, context last.
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<{v}> top;
    std::unique_ptr<{writer}> vcd;
    uint64_t cycle = 0;
    // The time of the last dump (dumps must go forward in time).
    uint64_t last_dump = 0;
    bool dumped = false;
    std::vector<std::string> marker_names;
    uint64_t markers = 0;
    uint32_t marker_code = 0;
}};

constexpr uint64_t CYCLE_PS = {CYCLE_PS};
constexpr uint64_t HALF_PS = {half};

void dump_at(Model* m, uint64_t time) {{
    if (m->dumped && time <= m->last_dump) time = m->last_dump + 1;
    m->vcd->dump(time);
    m->last_dump = time;
    m->dumped = true;
}}

// The marker signals' trace callbacks (registered after the model's, so their codes
// follow the model's).
void markers_init(void* userp, {tracer}* tracep, uint32_t code) {{
    auto* m = static_cast<Model*>(userp);
    m->marker_code = code;
    tracep->scopeEscape(' ');
    tracep->pushNamePrefix(\"markers \");
    for (size_t i = 0; i < m->marker_names.size(); ++i)
        tracep->declBit(code + static_cast<uint32_t>(i), m->marker_names[i].c_str(), {decl_args});
    tracep->popNamePrefix();
    tracep->scopeEscape('.');
}}

void markers_full(void* userp, {tracer}::Buffer* bufp) {{
    auto* m = static_cast<Model*>(userp);
    uint32_t* const oldp = bufp->oldp(m->marker_code);
    for (size_t i = 0; i < m->marker_names.size(); ++i)
        bufp->fullBit(oldp + i, (m->markers >> i) & 1);
}}

void markers_chg(void* userp, {tracer}::Buffer* bufp) {{
    auto* m = static_cast<Model*>(userp);
    uint32_t* const oldp = bufp->oldp(m->marker_code);
    for (size_t i = 0; i < m->marker_names.size(); ++i)
        bufp->chgBit(oldp + i, (m->markers >> i) & 1);
}}
"
    )
    .unwrap();

    // apply(): mask every input to its width (Verilator assumes the unused bits are zero).
    writeln!(s, "void apply({v}* t, const Inputs* in) {{").unwrap();
    if b.inputs.is_empty() {
        s.push_str("    (void)t; (void)in;\n");
    }
    for p in &b.inputs {
        let n = &p.name;
        match p.repr {
            Repr::Bool => writeln!(s, "    t->{n} = in->{n} ? 1 : 0;").unwrap(),
            Repr::Words(_) => {
                let w32 = p.width.div_ceil(32);
                for i in 0..w32 {
                    let top_bits = p.width - 32 * i;
                    let mask = if top_bits >= 32 {
                        String::new()
                    } else {
                        format!(" & {:#x}u", (1u64 << top_bits) - 1)
                    };
                    writeln!(
                        s,
                        "    t->{n}[{i}] = static_cast<uint32_t>(in->{n}[{}] >> {}){mask};",
                        i / 2,
                        32 * (i % 2)
                    )
                    .unwrap();
                }
            }
            _ => {
                let container = p.repr.size_align().0 * 8;
                if p.width == container {
                    writeln!(s, "    t->{n} = in->{n};").unwrap();
                } else {
                    writeln!(
                        s,
                        "    t->{n} = in->{n} & {}u;",
                        mask64(p.width).replace('_', "")
                    )
                    .unwrap();
                }
            }
        }
    }
    s.push_str("}\n\n");

    writeln!(s, "void sample(const {v}* t, Outputs* out) {{").unwrap();
    if b.outputs.is_empty() {
        s.push_str("    (void)t; (void)out;\n");
    }
    for p in &b.outputs {
        let n = &p.name;
        match p.repr {
            Repr::Bool => writeln!(s, "    out->{n} = t->{n} != 0;").unwrap(),
            Repr::Words(words) => {
                let w32 = p.width.div_ceil(32);
                for k in 0..words {
                    let lo = format!("static_cast<uint64_t>(t->{n}[{}])", 2 * k);
                    if 2 * k + 1 < w32 {
                        writeln!(
                            s,
                            "    out->{n}[{k}] = {lo} | (static_cast<uint64_t>(t->{n}[{}]) << 32);",
                            2 * k + 1
                        )
                        .unwrap();
                    } else {
                        writeln!(s, "    out->{n}[{k}] = {lo};").unwrap();
                    }
                }
            }
            _ => writeln!(s, "    out->{n} = t->{n};").unwrap(),
        }
    }
    s.push_str("}\n\n");

    writeln!(
        s,
        "void close_trace(Model* m) {{
    if (m->vcd) {{
        // The falling edge of the last cycle (each step dumps its falling edge together
        // with the next cycle's inputs).
        {clock_low}
        m->top->eval();
        dump_at(m, m->cycle * CYCLE_PS);
        m->vcd->close();
        m->vcd.reset();
    }}
}}

}}  // namespace

extern \"C\" {{

void* {c}_new() noexcept {{
    try {{
        auto m = std::make_unique<Model>();
        m->ctx = std::make_unique<VerilatedContext>();
        m->ctx->traceEverOn(true);
        m->top = std::make_unique<{v}>(m->ctx.get(), \"uut\");
        {clock_low}
        m->top->eval();
        return m.release();
    }} catch (...) {{
        return nullptr;
    }}
}}

void {c}_free(void* p) noexcept {{
    auto* m = static_cast<Model*>(p);
    if (!m) return;
    close_trace(m);
    m->top->final();
    delete m;
}}

// One clock cycle: apply the inputs (the clock is low), settle, sample the outputs, dump
// at cycle*CYCLE_PS; rise, settle, dump at +HALF_PS; fall, settle (dumped by the next
// step, or by close_trace).
void {c}_step(void* p, const Inputs* in, Outputs* out) noexcept {{
    auto* m = static_cast<Model*>(p);
    auto* t = m->top.get();
    const uint64_t time = m->cycle * CYCLE_PS;
    m->ctx->time(time);
    // The previous cycle's falling edge and these inputs settle in one eval: every
    // block is clocked on the rising edge only, so two evals per cycle suffice.
    {t_clock_low}
    apply(t, in);
    t->eval();
    sample(t, out);
    if (m->vcd) dump_at(m, time);
    m->ctx->time(time + HALF_PS);
    {t_clock_high}
    t->eval();
    if (m->vcd) dump_at(m, time + HALF_PS);
    m->cycle += 1;
}}

// 0 when the file is open; -1 when it could not be opened.
int {c}_trace_open(void* p, const char* path) noexcept {{
    auto* m = static_cast<Model*>(p);
    close_trace(m);
    try {{
        auto vcd = std::make_unique<{writer}>();
        m->top->trace(vcd.get(), 99);
        if (!m->marker_names.empty()) {{
            vcd->spTrace()->addInitCb(&markers_init, m);
            vcd->spTrace()->addFullCb(&markers_full, m);
            vcd->spTrace()->addChgCb(&markers_chg, m);
        }}
        vcd->open(path);
        if (!vcd->isOpen()) return -1;
        m->vcd = std::move(vcd);
        m->dumped = false;
        return 0;
    }} catch (...) {{
        return -1;
    }}
}}

void {c}_trace_close(void* p) noexcept {{
    close_trace(static_cast<Model*>(p));
}}

// The next step is cycle `cycle` (the trace's time jumps there) when that is later
// than the model's own count.
void {c}_set_cycle(void* p, uint64_t cycle) noexcept {{
    auto* m = static_cast<Model*>(p);
    if (cycle > m->cycle) m->cycle = cycle;
}}

// Marker signal names for the traces opened from now on (at most 64).
void {c}_markers(void* p, const char* const* names, size_t n) noexcept {{
    auto* m = static_cast<Model*>(p);
    try {{
        m->marker_names.assign(names, names + (n > 64 ? 64 : n));
    }} catch (...) {{
        m->marker_names.clear();
    }}
}}

// Marker bits from the last step on, dumped 1 ps after its rising edge when they change.
void {c}_mark(void* p, uint64_t bits) noexcept {{
    auto* m = static_cast<Model*>(p);
    if (bits == m->markers) return;
    m->markers = bits;
    // Before the trace's first dump the state goes out with that dump.
    if (m->vcd && m->dumped && !m->marker_names.empty()) {{
        const uint64_t last_edge = m->cycle == 0 ? 0 : (m->cycle - 1) * CYCLE_PS + HALF_PS;
        dump_at(m, last_edge + 1);
    }}
}}

}}  // extern \"C\"
"
    )
    .unwrap();
    s
}

// ---------------------------------------------------------------------------------------
// Rust
// ---------------------------------------------------------------------------------------

fn port_doc(p: &PortSpec, input: bool) -> String {
    let dir = if input { "input" } else { "output" };
    match p.repr {
        Repr::Words(n) => format!(
            "`{}`: {dir}, {} bits as {n} words (word 0 = bits 63:0).",
            p.name, p.width
        ),
        _ if p.width == 1 => format!("`{}`: {dir}, 1 bit.", p.name),
        _ => format!("`{}`: {dir}, {} bits.", p.name, p.width),
    }
}

fn rust_struct(s: &mut String, b: &BlockSpec, kind: &str, ports: &[PortSpec], input: bool) {
    let ty = format!("{}{kind}", b.camel);
    let what = if input {
        "Inputs of one clock cycle: one field per input port except `clock`. Bits above a port's width are ignored by both backends."
    } else {
        "Outputs of one clock cycle, as they settle with that cycle's inputs before the rising edge: one field per output port."
    };
    writeln!(
        s,
        "/// {what}\n///\n/// Block `{}` (Verilog module `{}`, RustHDL type `{}`).\n#[repr(C)]\n#[derive(Clone, Copy, PartialEq, Eq, Hash)]\npub struct {ty} {{",
        b.name, b.module, b.rust_type
    )
    .unwrap();
    for p in ports {
        writeln!(
            s,
            "    /// {}\n    pub {}: {},",
            port_doc(p, input),
            p.name,
            p.repr.rust()
        )
        .unwrap();
    }
    s.push_str("}\n\n");

    // Layout, checked against the numbers the C++ side asserts too.
    let (offsets, size) = layout(ports);
    if !ports.is_empty() {
        writeln!(
            s,
            "const _: () = assert!(::core::mem::size_of::<{ty}>() == {size});"
        )
        .unwrap();
    }
    for (p, off) in ports.iter().zip(&offsets) {
        writeln!(
            s,
            "const _: () = assert!(::core::mem::offset_of!({ty}, {}) == {off});",
            p.name
        )
        .unwrap();
    }

    writeln!(
        s,
        "impl ::core::default::Default for {ty} {{\n    fn default() -> Self {{\n        Self {{"
    )
    .unwrap();
    for p in ports {
        let zero = match p.repr {
            Repr::Bool => "false".to_string(),
            Repr::Words(n) => format!("[0; {n}]"),
            _ => "0".to_string(),
        };
        writeln!(s, "            {}: {zero},", p.name).unwrap();
    }
    s.push_str("        }\n    }\n}\n\n");

    writeln!(
        s,
        "impl ::core::fmt::Debug for {ty} {{\n    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {{\n        f.debug_struct(\"{ty}\")"
    )
    .unwrap();
    for p in ports {
        let val = match p.repr {
            Repr::Bool => format!("&self.{}", p.name),
            Repr::Words(_) => format!("&crate::port::HexWords(&self.{})", p.name),
            _ => format!("&crate::port::Hex(self.{} as u64)", p.name),
        };
        writeln!(s, "            .field(\"{}\", {val})", p.name).unwrap();
    }
    s.push_str("            .finish()\n    }\n}\n\n");

    writeln!(
        s,
        "impl crate::PortStruct for {ty} {{\n    const PORTS: &'static [crate::PortInfo] = &["
    )
    .unwrap();
    for p in ports {
        writeln!(
            s,
            "        crate::PortInfo {{ name: \"{}\", width: {} }},",
            p.name, p.width
        )
        .unwrap();
    }
    s.push_str("    ];\n");
    writeln!(
        s,
        "    fn random<R: ::rand::Rng + ?Sized>(rng: &mut R) -> Self {{\n        Self {{"
    )
    .unwrap();
    for p in ports {
        let v = match p.repr {
            Repr::Bool => "rng.gen::<bool>()".to_string(),
            Repr::Words(_) => format!("crate::port::random_words(rng, {})", p.width),
            r => format!("(rng.gen::<u64>() & {}) as {}", mask64(p.width), r.rust()),
        };
        writeln!(s, "            {}: {v},", p.name).unwrap();
    }
    s.push_str("        }\n    }\n");
    writeln!(s, "    fn masked(self) -> Self {{\n        Self {{").unwrap();
    for p in ports {
        let v = match p.repr {
            Repr::Bool => format!("self.{}", p.name),
            Repr::Words(_) => format!("crate::port::mask_words(self.{}, {})", p.name, p.width),
            r => format!(
                "(self.{} as u64 & {}) as {}",
                p.name,
                mask64(p.width),
                r.rust()
            ),
        };
        writeln!(s, "            {}: {v},", p.name).unwrap();
    }
    s.push_str("        }\n    }\n");
    // Port values by index, as little-endian 64-bit words.
    writeln!(
        s,
        "    fn port_words(&self, index: usize) -> ::std::vec::Vec<u64> {{\n        match index {{"
    )
    .unwrap();
    for (i, p) in ports.iter().enumerate() {
        let v = match p.repr {
            Repr::Words(_) => format!("self.{}.to_vec()", p.name),
            _ => format!("vec![self.{} as u64]", p.name),
        };
        writeln!(s, "            {i} => {v},").unwrap();
    }
    s.push_str("            _ => vec![],\n        }\n    }\n");
    writeln!(
        s,
        "    #[allow(unused_variables)]\n    fn set_port_words(&mut self, index: usize, words: &[u64]) {{\n        let word = |k: usize| words.get(k).copied().unwrap_or(0);\n        match index {{"
    )
    .unwrap();
    for (i, p) in ports.iter().enumerate() {
        let v = match p.repr {
            Repr::Bool => format!("self.{} = word(0) & 1 != 0", p.name),
            Repr::Words(n) => format!(
                "{{ let mut w = [0u64; {n}]; for (k, x) in w.iter_mut().enumerate() {{ *x = word(k); }} self.{} = crate::port::mask_words(w, {}); }}",
                p.name, p.width
            ),
            r => format!(
                "self.{} = (word(0) & {}) as {}",
                p.name,
                mask64(p.width),
                r.rust()
            ),
        };
        writeln!(s, "            {i} => {v},").unwrap();
    }
    s.push_str("            _ => {}\n        }\n    }\n}\n\n");
}

/// Whether two blocks have the same ports (names and widths, in order).
fn same_ports(a: &BlockSpec, b: &BlockSpec) -> bool {
    let same = |x: &[PortSpec], y: &[PortSpec]| {
        x.len() == y.len()
            && x.iter()
                .zip(y)
                .all(|(p, q)| p.name == q.name && p.width == q.width)
    };
    same(&a.inputs, &b.inputs) && same(&a.outputs, &b.outputs)
}

/// `shares`: an earlier block with the same ports, whose `Inputs` / `Outputs` structs this
/// block reuses (type aliases), so that code written for one configuration of a block (the
/// NIC top without and with a TPT) drives the other.
fn rust_block(s: &mut String, b: &BlockSpec, shares: Option<&BlockSpec>, fst: bool) {
    let cm = &b.camel;
    let c = b.c_stem();
    writeln!(
        s,
        "// ===== block `{}` (module `{}`) =====\n",
        b.name, b.module
    )
    .unwrap();
    match shares {
        Some(o) => {
            writeln!(
                s,
                "/// Block `{}` has the ports of `{}`: it shares its input and output structs.\npub type {cm}Inputs = {}Inputs;\n/// See [`{cm}Inputs`].\npub type {cm}Outputs = {}Outputs;\n",
                b.name, o.name, o.camel, o.camel
            )
            .unwrap();
        }
        None => {
            rust_struct(s, b, "Inputs", &b.inputs, true);
            rust_struct(s, b, "Outputs", &b.outputs, false);
        }
    }

    writeln!(
        s,
        "impl crate::CosimBlock for blocks::{cm} {{
    const NAME: &'static str = \"{}\";
    const MODULE: &'static str = \"{}\";
    const RUST_TYPE: &'static str = \"{}\";
    type Inputs = {cm}Inputs;
    type Outputs = {cm}Outputs;
}}
",
        b.name, b.module, b.rust_type
    )
    .unwrap();

    // RustHDL backend.
    let clock = if b.has_clock {
        "Some(&mut uut.clock)"
    } else {
        "None"
    };
    writeln!(
        s,
        "impl crate::RustHdlBlock for blocks::{cm} {{
    type Uut = {};
    fn build() -> Self::Uut {{
        {}
    }}
    #[allow(unused_variables)]
    fn clock(uut: &mut Self::Uut) -> Option<&mut ::rust_hdl::prelude::Signal<::rust_hdl::prelude::In, ::rust_hdl::prelude::Clock>> {{
        {clock}
    }}
    #[allow(unused_variables, clippy::useless_conversion)]
    fn apply(uut: &mut Self::Uut, inputs: &Self::Inputs) {{",
        b.rust_type, b.rust_constructor
    )
    .unwrap();
    for p in &b.inputs {
        let n = &p.name;
        match p.repr {
            // `.into()`: a bundle port (a `LogicStruct` wider than 64 bits) from its bits.
            Repr::Words(_) => writeln!(
                s,
                "        uut.{n}.next = crate::port::bits_from_words::<{}>(&inputs.{n}).into();",
                p.width
            )
            .unwrap(),
            _ => writeln!(
                s,
                "        uut.{n}.next = crate::port::PortValue::from_u64(inputs.{n} as u64);"
            )
            .unwrap(),
        }
    }
    writeln!(s, "    }}\n    #[allow(unused_variables, clippy::useless_conversion)]\n    fn sample(uut: &Self::Uut) -> Self::Outputs {{\n        {cm}Outputs {{")
        .unwrap();
    for p in &b.outputs {
        let n = &p.name;
        let v = match p.repr {
            Repr::Bool => format!("crate::port::PortValue::to_u64(uut.{n}.val()) != 0"),
            Repr::Words(k) => format!(
                "crate::port::bits_to_words::<{}, {k}>(uut.{n}.val().into())",
                p.width
            ),
            r => format!(
                "crate::port::PortValue::to_u64(uut.{n}.val()) as {}",
                r.rust()
            ),
        };
        writeln!(s, "            {n}: {v},").unwrap();
    }
    s.push_str("        }\n    }\n}\n\n");
    writeln!(
        s,
        "/// Block `{}` stepped by RustHDL direct stepping (see [`crate::RustHdlModel`]).\npub type RustHdl{cm} = crate::RustHdlModel<blocks::{cm}>;\n",
        b.name
    )
    .unwrap();

    // Verilator backend: the VCD model, and the FST model when one is built.
    let ffi_mod = |suffix: &str| {
        format!(
            "#[cfg(not(verilator_missing))]
mod ffi_{m}{suffix} {{
    use super::*;
    extern \"C\" {{
        pub fn {c}{suffix}_new() -> *mut crate::verilated::RawModel;
        pub fn {c}{suffix}_free(model: *mut crate::verilated::RawModel);
        pub fn {c}{suffix}_step(model: *mut crate::verilated::RawModel, inputs: *const {cm}Inputs, outputs: *mut {cm}Outputs);
        pub fn {c}{suffix}_trace_open(model: *mut crate::verilated::RawModel, path: *const ::std::os::raw::c_char) -> i32;
        pub fn {c}{suffix}_trace_close(model: *mut crate::verilated::RawModel);
        pub fn {c}{suffix}_set_cycle(model: *mut crate::verilated::RawModel, cycle: u64);
        pub fn {c}{suffix}_markers(model: *mut crate::verilated::RawModel, names: *const *const ::std::os::raw::c_char, n: usize);
        pub fn {c}{suffix}_mark(model: *mut crate::verilated::RawModel, bits: u64);
    }}
}}
",
            m = b.module
        )
    };
    let ffi_value = |suffix: &str| {
        format!(
            "Some(crate::verilated::Ffi {{
        new: ffi_{m}{suffix}::{c}{suffix}_new,
        free: ffi_{m}{suffix}::{c}{suffix}_free,
        step: ffi_{m}{suffix}::{c}{suffix}_step,
        trace_open: ffi_{m}{suffix}::{c}{suffix}_trace_open,
        trace_close: ffi_{m}{suffix}::{c}{suffix}_trace_close,
        set_cycle: ffi_{m}{suffix}::{c}{suffix}_set_cycle,
        markers: ffi_{m}{suffix}::{c}{suffix}_markers,
        mark: ffi_{m}{suffix}::{c}{suffix}_mark,
    }})",
            m = b.module
        )
    };
    s.push_str(&ffi_mod(""));
    if fst {
        s.push_str(&ffi_mod(TraceFormat::Fst.suffix()));
    }
    let fst_const = if fst {
        format!(
            "    #[cfg(not(verilator_missing))]\n    const FFI_FST: Option<crate::verilated::Ffi<{cm}Inputs, {cm}Outputs>> = {};\n",
            ffi_value(TraceFormat::Fst.suffix())
        )
    } else {
        String::new()
    };
    writeln!(
        s,
        "
// SAFETY: the functions are the generated shim of this block, whose structs have the
// layout of {cm}Inputs/{cm}Outputs (asserted on both sides).
unsafe impl crate::VerilatedBlock for blocks::{cm} {{
    #[cfg(not(verilator_missing))]
    const FFI: Option<crate::verilated::Ffi<{cm}Inputs, {cm}Outputs>> = {ffi};
    #[cfg(verilator_missing)]
    const FFI: Option<crate::verilated::Ffi<{cm}Inputs, {cm}Outputs>> = None;
{fst_const}}}

/// Block `{n}` as its Verilator model `V{m}` (see [`crate::VerilatorModel`]).
pub type Verilated{cm} = crate::VerilatorModel<blocks::{cm}>;
",
        ffi = ffi_value(""),
        m = b.module,
        n = b.name,
    )
    .unwrap();
}

/// The whole generated Rust file: one section per block, the `blocks` markers, the
/// registry and the visitor over all blocks. `extra` blocks (the crate's self-test
/// blocks) get types and impls but stay out of the registry.
pub fn rust_file(
    blocks: &[BlockSpec],
    extra: &[BlockSpec],
    verilator_version: Option<&str>,
    fst_modules: &[String],
) -> String {
    let mut s = String::new();
    s.push_str("// @generated by nic-cosim/build.rs from nic_rtl::export::exported_blocks(); do not edit.\n\n");
    s.push_str("/// One marker type per block, implementing [`crate::CosimBlock`], [`crate::RustHdlBlock`] and\n/// [`crate::VerilatedBlock`] (named after the block: `crc32` -> `Crc32`).\npub mod blocks {\n");
    for b in blocks.iter().chain(extra) {
        writeln!(
            s,
            "    /// Block `{}`: Verilog module `{}`, RustHDL type `{}`.\n    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]\n    pub struct {};",
            b.name, b.module, b.rust_type, b.camel
        )
        .unwrap();
    }
    s.push_str("}\n\n");
    let all: Vec<&BlockSpec> = blocks.iter().chain(extra).collect();
    for (i, b) in all.iter().enumerate() {
        let shares = all[..i].iter().copied().find(|o| same_ports(o, b));
        rust_block(&mut s, b, shares, fst_modules.contains(&b.module));
    }

    s.push_str("/// Names of the exported blocks that have generated types (and, unless\n/// [`verilator_version`] is `None`, Verilator models), in `exported_blocks` order.\npub const BLOCKS: &[&str] = &[");
    for b in blocks {
        write!(s, "\"{}\", ", b.name).unwrap();
    }
    s.push_str("];\n\n/// Name, module, RustHDL type and ports of every block in [`BLOCKS`].\npub const BLOCK_INFO: &[BlockInfo] = &[\n");
    for b in blocks {
        writeln!(
            s,
            "    BlockInfo {{ name: \"{n}\", module: \"{m}\", rust_type: \"{t}\", inputs: <{c}Inputs as PortStruct>::PORTS, outputs: <{c}Outputs as PortStruct>::PORTS }},",
            n = b.name,
            m = b.module,
            t = b.rust_type,
            c = b.camel
        )
        .unwrap();
    }
    s.push_str("];\n\n");
    s.push_str("/// Call `visitor.visit::<B>()` for every block of [`BLOCKS`], in order.\npub fn for_each_block<V: BlockVisitor>(visitor: &mut V) {\n");
    for b in blocks {
        writeln!(s, "    visitor.visit::<blocks::{}>();", b.camel).unwrap();
    }
    s.push_str("}\n\n");
    writeln!(
        s,
        "pub(crate) const VERILATOR_VERSION: Option<&str> = {:?};",
        verilator_version
    )
    .unwrap();
    writeln!(
        s,
        "/// Clock period of both backends' traces in ps.\npub const CYCLE_PS: u64 = {CYCLE_PS};"
    )
    .unwrap();
    s
}
