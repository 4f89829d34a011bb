//! The names of the array stencils: the element-wise ones from the op table, the
//! structural ones from their rows of [`crate::array_kernels::KERNELS`], the fused ones
//! (sincos, dot products of an element-wise operation) and the calls.

use crate::array_kernels::Classes;
use crate::graph::{ArrayNode, ArrayOp, Form, Op, ScalarType};

/// Float element-wise operations that fuse into a dot product reading them
/// (`st_arr_dot_<op>_f_<form>`: the sum of `(x op z) * y`, the same roundings in one
/// pass instead of a temporary array).
pub const FUSED_DOT_OPS: [Op; 3] = [Op::Add, Op::Sub, Op::Mul];

/// The stencil of a dot product whose left operand is `x op z` in `form`.
pub fn fused_dot_name(op: Op, form: Form) -> String {
    format!("st_arr_dot_{}_f_{}", op.stencil_name(), form.code())
}

/// sin to `cp_a0` and cos to `cp_a2` of one float array `cp_a1` (the scheduler fuses
/// `sin(a)` and `cos(a)` of one array into it).
pub const SINCOS_STENCIL: &str = "st_arr_sincos_f_a";

/// Every array stencil name the compiler may ask for (the table of
/// `stencils/gen_arrays.py`).
pub fn stencil_names() -> Vec<String> {
    let mut names = Vec::new();
    let element_wise = |op: &&Op| op.has_array_stencils();
    for op in Op::BINARY.iter().filter(element_wise) {
        for (class, exists) in [("f", op.takes_float()), ("i", op.takes_int())] {
            for form in [Form::AA, Form::AS, Form::SA] {
                if exists {
                    names.push(format!(
                        "st_arr_{}_{class}_{}",
                        op.stencil_name(),
                        form.code()
                    ));
                }
            }
        }
    }
    for op in Op::UNARY.iter().filter(element_wise) {
        for (class, exists) in [("f", op.takes_float()), ("i", op.takes_int())] {
            if exists {
                names.push(format!("st_arr_{}_{class}_a", op.stencil_name()));
            }
        }
    }
    names.push(SINCOS_STENCIL.to_string());
    for form in [Form::AA, Form::AS, Form::SA, Form::SS] {
        names.push(format!("st_arr_select_f_a{}", form.code()));
    }
    for k in &crate::array_kernels::KERNELS {
        for suffix in k.classes.suffixes() {
            names.push(format!("st_arr_{}{suffix}", k.name));
        }
    }
    // calls of imported functions, by result code (`crate::imports`)
    names.extend(["f", "i", "b", "v"].map(|r| format!("st_call_{r}")));
    names.extend(["f", "i", "b", "v"].map(|r| format!("st_call_{r}_p")));
    names.push("st_arr_call_buffer".to_string());
    for op in FUSED_DOT_OPS {
        for form in [Form::AA, Form::AS, Form::SA] {
            names.push(fused_dot_name(op, form));
        }
    }
    names
}

/// The stencil of an array node of element or result type `ty`, by name: element-wise
/// ones from the op table, structural ones from their row of
/// [`crate::array_kernels::KERNELS`].
pub fn stencil_name(n: &ArrayNode, args: &[ScalarType]) -> Option<String> {
    let class = |t: ScalarType| if t == ScalarType::Float { "f" } else { "i" };
    Some(match &n.op {
        ArrayOp::Binary(op, form) => {
            format!(
                "st_arr_{}_{}_{}",
                op.stencil_name(),
                class(args[0]),
                form.code()
            )
        }
        ArrayOp::Unary(op) => format!("st_arr_{}_{}_a", op.stencil_name(), class(args[0])),
        ArrayOp::Select(form) => format!("st_arr_select_f_a{}", form.code()),
        ArrayOp::Call { signature, .. } => crate::graph::call_stencil_name(signature),
        op => {
            let k = op.kernel()?;
            let suffix = match k.classes {
                Classes::FloatAndInt => class(args[0]),
                Classes::Float => "f",
                Classes::Any => "",
            };
            let sep = if suffix.is_empty() { "" } else { "_" };
            format!("st_arr_{}{sep}{suffix}", k.name)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_array_stencil_is_in_the_x86_64_object() {
        let elf = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../stencils/x86_64.o"
        ))
        .unwrap();
        let db = crate::stencil_db::StencilDb::parse(&elf).unwrap();
        for name in stencil_names() {
            assert!(db.id(&name).is_some(), "{name} missing");
        }
    }
}
