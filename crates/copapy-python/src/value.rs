//! `copapy.value`: a traced scalar. Every operator builds a graph node in Rust.

use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;

use copapy_compiler::graph::NodeKind;
use copapy_compiler::trace::{self, TraceError};
use copapy_compiler::{Op, ScalarType, Value};

use crate::convert::{convert_bits, number, parse_dtype, type_name, Number};

/// A scalar of type float, int or bool whose operations are traced for compilation.
///
/// `value(0.25)` creates an input variable; Python numbers mixed into expressions
/// become constants. The result of an operation is a new `value`.
#[pyclass(module = "copapy", name = "value", frozen)]
pub struct PyValue {
    v: Value,
    /// Whether this object gave its node a name (and must take it back when dropped).
    named: bool,
}

impl PyValue {
    /// Wraps a graph value for Python. The node counts as user-visible while the Python
    /// object lives, so a program compiled meanwhile keeps it readable.
    pub fn from_graph(v: Value) -> PyValue {
        v.expose();
        PyValue { v, named: false }
    }

    pub fn value(&self) -> &Value {
        &self.v
    }
}

impl Drop for PyValue {
    fn drop(&mut self) {
        if self.named {
            crate::names::forget_name(self.v.id());
        }
        self.v.unexpose();
    }
}

fn trace_err(e: TraceError) -> PyErr {
    PyTypeError::new_err(e.message)
}

/// The operand as a graph value: a `value`, or a Python number as a constant.
/// `None` means "not a number" so Python can try the other operand (NotImplemented).
///
/// Next to a float value any integer (Python or NumPy) becomes a float constant directly,
/// rounded once, so ints beyond the int32 range (`x * 10**10`) work as they would after
/// promotion.
pub(crate) fn operand(obj: &Bound<'_, PyAny>, beside: ScalarType) -> PyResult<Option<Value>> {
    if let Ok(v) = obj.cast::<PyValue>() {
        return Ok(Some(v.get().value().clone()));
    }
    let Some(n) = number(obj)? else {
        return Ok(None);
    };
    if beside == ScalarType::Float && matches!(n, Number::Int(_) | Number::WideInt(_)) {
        return Ok(Some(Value::constant(ScalarType::Float, n.float_bits())));
    }
    let (ty, bits) = n.natural_bits()?;
    Ok(Some(Value::constant(ty, bits)))
}

fn wrap(py: Python<'_>, v: Value) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, PyValue::from_graph(v))?.into_any())
}

impl PyValue {
    fn binary(&self, op: Op, other: &Bound<'_, PyAny>, reflected: bool) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Some(o) = operand(other, self.v.ty())? else {
            return Ok(py.NotImplemented());
        };
        let r = if reflected {
            trace::binary(op, &o, &self.v)
        } else {
            trace::binary(op, &self.v, &o)
        };
        wrap(py, r.map_err(trace_err)?)
    }

    fn unary(&self, py: Python<'_>, op: Op) -> PyResult<Py<PyAny>> {
        wrap(py, trace::unary(op, &self.v).map_err(trace_err)?)
    }
}

/// An exponent of `x ** e` that is a whole number: Python and NumPy ints and bools
/// (`false` = integer) or integral floats (`true`). `None` for anything else.
fn integer_exponent(e: &Bound<'_, PyAny>) -> PyResult<Option<(Option<i128>, bool)>> {
    if e.cast::<PyValue>().is_ok() {
        return Ok(None);
    }
    Ok(match number(e)? {
        Some(Number::Bool(b)) => Some((Some(i128::from(b)), false)),
        Some(Number::Int(n)) => Some((Some(n), false)),
        // beyond 128 bits: only its float32 rounding (±inf) is known
        Some(Number::WideInt(_)) => Some((None, false)),
        Some(Number::Float(x)) if x.fract() == 0.0 && x.abs() < 4294967296.0 => {
            Some((Some(x as i128), true))
        }
        _ => None,
    })
}

#[pymethods]
impl PyValue {
    #[new]
    #[pyo3(signature = (source, dtype = None, name = None))]
    fn new(
        source: &Bound<'_, PyAny>,
        dtype: Option<&str>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let name = name.map(crate::names::name_arg).transpose()?;
        if let Some(n) = &name {
            crate::names::check_name(n)?;
        }
        if source.cast::<PyValue>().is_ok() {
            return Err(PyTypeError::new_err(
                "value(...) takes a Python number; this is already a copapy value",
            ));
        }
        let Some(n) = number(source)? else {
            return Err(PyTypeError::new_err(format!(
                "value(...) takes a Python bool, int or float, got {}",
                type_name(source)
            )));
        };
        let (ty, bits) = match dtype {
            None => n.natural_bits()?,
            Some(d) => {
                let ty = parse_dtype(d)?;
                (ty, convert_bits(ty, n)?)
            }
        };
        let mut v = PyValue::from_graph(Value::input(ty, bits));
        if let Some(n) = name {
            crate::names::set_name(v.v.id(), n);
            v.named = true;
        }
        Ok(v)
    }

    /// The name given with `value(..., name=...)`, or None.
    #[getter]
    fn name(&self) -> Option<String> {
        if self.named {
            crate::names::name_of(self.v.id())
        } else {
            None
        }
    }

    /// Type name: 'float', 'int' or 'bool'.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.v.ty().name()
    }

    /// Lets `value[int]` and `value[float]` be used at run time (the type hints are in the stubs).
    #[classmethod]
    fn __class_getitem__(cls: &Bound<'_, PyType>, _item: &Bound<'_, PyAny>) -> Py<PyAny> {
        cls.clone().into_any().unbind()
    }

    fn __repr__(&self) -> String {
        let what = match self.v.kind() {
            NodeKind::Input { init } => format!("input, initially {}", show(self.v.ty(), *init)),
            NodeKind::Const(bits) => format!("constant {}", show(self.v.ty(), *bits)),
            _ => "computed".to_string(),
        };
        format!("value[{}]({what})", self.v.ty().name())
    }

    /// Values are immutable: a copy is the value itself.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Values are immutable: a deep copy is the value itself (its graph is shared).
    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    fn __hash__(&self) -> isize {
        self.v.id() as isize
    }

    fn __bool__(&self) -> PyResult<bool> {
        Err(PyTypeError::new_err(
            "the truth value of a copapy value is unknown while tracing: Python `if`, `while`, \
             `and`, `or` and `not` cannot branch on it. Use cp.iif(condition, a, b) to select \
             between two values in the compiled program",
        ))
    }

    fn __float__(&self) -> PyResult<f64> {
        Err(PyTypeError::new_err(
            "a copapy value has no number while tracing: compile it and read it with Target.read_value(v)",
        ))
    }

    fn __int__(&self) -> PyResult<i64> {
        Err(PyTypeError::new_err(
            "a copapy value has no number while tracing: compile it and read it with Target.read_value(v)",
        ))
    }

    fn __add__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Add, o, false)
    }
    fn __radd__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Add, o, true)
    }
    fn __sub__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Sub, o, false)
    }
    fn __rsub__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Sub, o, true)
    }
    fn __mul__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Mul, o, false)
    }
    fn __rmul__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Mul, o, true)
    }
    fn __truediv__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Div, o, false)
    }
    fn __rtruediv__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Div, o, true)
    }
    fn __floordiv__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::FloorDiv, o, false)
    }
    fn __rfloordiv__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::FloorDiv, o, true)
    }
    fn __mod__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Mod, o, false)
    }
    fn __rmod__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Mod, o, true)
    }
    fn __and__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::And, o, false)
    }
    fn __rand__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::And, o, true)
    }
    fn __or__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Or, o, false)
    }
    fn __ror__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Or, o, true)
    }
    fn __xor__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Xor, o, false)
    }
    fn __rxor__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Xor, o, true)
    }
    fn __lshift__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Shl, o, false)
    }
    fn __rlshift__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Shl, o, true)
    }
    fn __rshift__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Shr, o, false)
    }
    fn __rrshift__(&self, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(Op::Shr, o, true)
    }

    fn __richcmp__(&self, o: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let op = match op {
            CompareOp::Lt => Op::Lt,
            CompareOp::Le => Op::Le,
            CompareOp::Gt => Op::Gt,
            CompareOp::Ge => Op::Ge,
            CompareOp::Eq => Op::Eq,
            CompareOp::Ne => Op::Ne,
        };
        self.binary(op, o, false)
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.unary(py, Op::Neg)
    }

    fn __pos__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __abs__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.unary(py, Op::Abs)
    }

    fn __pow__(
        &self,
        exponent: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if modulo.is_some() {
            return Err(PyTypeError::new_err(
                "pow() with a modulo is not supported for copapy values",
            ));
        }
        power(exponent.py(), &self.v, exponent)
    }

    fn __rpow__(
        &self,
        base: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = base.py();
        if modulo.is_some() {
            return Err(PyTypeError::new_err(
                "pow() with a modulo is not supported for copapy values",
            ));
        }
        let Some(b) = operand(base, self.v.ty())? else {
            return Ok(py.NotImplemented());
        };
        wrap(py, trace::binary(Op::Pow, &b, &self.v).map_err(trace_err)?)
    }
}

/// `base ** exponent`: an integer constant exponent becomes multiplications (as in
/// Copapy), anything else the `pow` function of the math library (float result).
pub fn power(py: Python<'_>, base: &Value, exponent: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if let Some((n, float_exponent)) = integer_exponent(exponent)? {
        let small = n
            .and_then(|n| i64::try_from(n).ok())
            .filter(|n| n.unsigned_abs() <= u64::from(u32::MAX));
        if let Some(small) = small {
            let base = if float_exponent {
                trace::to_float(base)
            } else {
                base.clone()
            };
            return wrap(py, trace::powi(&base, small).map_err(trace_err)?);
        }
        // multiplications only go to 2**32; an int result must not silently become a float
        if base.ty() != ScalarType::Float {
            return Err(PyValueError::new_err(format!(
                "integer exponent {} is too large for an int or bool base: use an exponent \
                 below 2**32 in magnitude, or a float base",
                exponent.repr()?
            )));
        }
        // For a float base every such power is 0, ±1, ±inf or NaN, the same for n - 1 as
        // for n; powf gives it, but the exponent rounded to float32 is even, so for an odd n
        // the sign of x (-0.0 included, found as 1/x < 0) is put back.
        if let Some(n) = n.filter(|n| n & 1 == 1) {
            let f = |x: f32| Value::constant(ScalarType::Float, x.to_bits());
            let t = |op, a: &Value, b: &Value| trace::binary(op, a, b).map_err(trace_err);
            let p = t(Op::Pow, base, &f((n - 1) as f32))?;
            let below = t(Op::Lt, base, &f(0.0))?;
            let reciprocal = t(Op::Div, &f(1.0), base)?;
            let negative = t(Op::Or, &below, &t(Op::Lt, &reciprocal, &f(0.0))?)?;
            let flipped = trace::unary(Op::Neg, &p).map_err(trace_err)?;
            return wrap(
                py,
                trace::select(&negative, &flipped, &p).map_err(trace_err)?,
            );
        }
    }
    let Some(e) = operand(exponent, ScalarType::Float)? else {
        return Ok(py.NotImplemented());
    };
    wrap(py, trace::binary(Op::Pow, base, &e).map_err(trace_err)?)
}

fn show(ty: ScalarType, bits: u32) -> String {
    match ty {
        ScalarType::Float => format!("{:?}", f32::from_bits(bits)),
        ScalarType::Int => format!("{}", bits as i32),
        ScalarType::Bool => if bits != 0 { "True" } else { "False" }.to_string(),
    }
}

/// Applies a unary math function to a value (the Python layer handles plain numbers).
pub fn math_unary(py: Python<'_>, v: &Bound<'_, PyValue>, op: Op) -> PyResult<Py<PyAny>> {
    v.get().unary(py, op)
}

/// Both operands of a two-argument function as graph values; at least one must be a value.
pub fn two_operands(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<(Value, Value)> {
    let beside = |o: &Bound<'_, PyAny>| {
        o.cast::<PyValue>()
            .map(|v| v.get().value().ty())
            .unwrap_or(ScalarType::Int)
    };
    let (ta, tb) = (beside(a), beside(b));
    let x = operand(a, tb)?;
    let y = operand(b, ta)?;
    match (x, y) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err(PyTypeError::new_err(format!(
            "{what} takes copapy values or numbers, got {} and {}",
            type_name(a),
            type_name(b)
        ))),
    }
}

/// A binary graph operation on two operands (values or numbers).
pub fn math_binary(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    op: Op,
    what: &str,
) -> PyResult<Py<PyAny>> {
    let (x, y) = two_operands(a, b, what)?;
    wrap(py, trace::binary(op, &x, &y).map_err(trace_err)?)
}

/// `iif(cond, a, b)`: branch-free select.
pub fn iif(
    py: Python<'_>,
    c: &Bound<'_, PyAny>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let cond = operand(c, ScalarType::Int)?.ok_or_else(|| {
        PyTypeError::new_err(format!(
            "iif condition must be a copapy value or a number, got {}",
            type_name(c)
        ))
    })?;
    let (x, y) = two_operands(a, b, "iif")?;
    wrap(py, trace::select(&cond, &x, &y).map_err(trace_err)?)
}

/// `sign(x)`: 1, 0 or -1 as an int value.
pub fn sign(py: Python<'_>, x: &Bound<'_, PyValue>) -> PyResult<Py<PyAny>> {
    wrap(py, trace::sign(x.get().value()).map_err(trace_err)?)
}
