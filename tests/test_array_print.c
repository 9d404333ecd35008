/* test_array_print - arrays as NumPy prints them, and the checks of the calls that compare
 * arrays and give a reduction's value to the host. Without a device: cujit_array_format_host
 * against NumPy 2's str() of every element type (edge values: NaN, infinities, -0.0, huge
 * and tiny floats choosing scientific notation, the shortest digits of f16, f32 and f64, the
 * integer extremes), wrapped rows, 3-D and 4-D brackets, summarised arrays, 0-d scalars,
 * empty arrays, the snprintf-like buffer (measure, cut short, exact) and every refusal. On
 * the checking fake driver (device memory backed by host memory, kernels that do nothing):
 * cujit_array_print and cujit_array_format of device arrays (a summarised one read by its
 * corners only), and the refusals of cujit_array_allclose, _allclose_host, _reduce_host and
 * _dot_host before any work, and their memory paths clean in the fake driver's eyes. */
#include <unistd.h>

#include "testutil.h"
#include "cujit_array.h"
#include "fakedriver/checkdriver.h"

/* An array's type, shape, NumPy's text of it, and its bytes (NULL: made by fill_big). */
typedef struct expect {
  const char *name;
  int type;
  int ndim;
  int64_t shape[4];
  const char *text;
  size_t nbytes;
  const char *bytes;
} expect;

static const expect kExpect[] = {
    /* Generated with NumPy 2.4.6: str() of each array. */
    {"bool", CUJIT_TYPE_BOOL, 1, {3}, "[ True False  True]", 3, "\x01\x00\x01"},
    {"bool 2-d", CUJIT_TYPE_BOOL, 2, {2, 1}, "[[ True]\n [ True]]", 2, "\x01\x01"},
    {"i8", CUJIT_TYPE_I8, 1, {3}, "[-128    0  127]", 3, "\x80\x00\x7f"},
    {"u8", CUJIT_TYPE_U8, 1, {3}, "[  0   7 255]", 3, "\x00\x07\xff"},
    {"i16", CUJIT_TYPE_I16, 1, {3}, "[-32768      5  32767]", 6, "\x00\x80\x05\x00\xff\x7f"},
    {"u16", CUJIT_TYPE_U16, 1, {2}, "[65535     1]", 4, "\xff\xff\x01\x00"},
    {"i32",
     CUJIT_TYPE_I32,
     1,
     {3},
     "[ 1 -2 30]",
     12,
     "\x01\x00\x00\x00\xfe\xff\xff\xff\x1e\x00\x00\x00"},
    {"u32",
     CUJIT_TYPE_U32,
     1,
     {2},
     "[4294967295          0]",
     8,
     "\xff\xff\xff\xff\x00\x00\x00\x00"},
    {"i64 min",
     CUJIT_TYPE_I64,
     1,
     {3},
     "[-9223372036854775808                    5  9223372036854775807]",
     24,
     "\x00\x00\x00\x00\x00\x00\x00\x80\x05\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff"
     "\x7f"},
    {"u64 max",
     CUJIT_TYPE_U64,
     1,
     {2},
     "[18446744073709551615                    0]",
     16,
     "\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00"},
    {"f64 fixed",
     CUJIT_TYPE_F64,
     1,
     {3},
     "[ 1.5   2.25 -3.  ]",
     24,
     "\x00\x00\x00\x00\x00\x00\xf8\x3f\x00\x00\x00\x00\x00\x00\x02\x40\x00\x00\x00\x00\x00\x00\x08"
     "\xc0"},
    {"f64 shortest",
     CUJIT_TYPE_F64,
     1,
     {3},
     "[0.1 0.2 0.3]",
     24,
     "\x9a\x99\x99\x99\x99\x99\xb9\x3f\x9a\x99\x99\x99\x99\x99\xc9\x3f\x33\x33\x33\x33\x33\x33\xd3"
     "\x3f"},
    {"f64 precision 8",
     CUJIT_TYPE_F64,
     1,
     {2},
     "[0.33333333 0.66666667]",
     16,
     "\x55\x55\x55\x55\x55\x55\xd5\x3f\x55\x55\x55\x55\x55\x55\xe5\x3f"},
    {"f64 sci small",
     CUJIT_TYPE_F64,
     1,
     {2},
     "[1.e-05 1.e+00]",
     16,
     "\xf1\x68\xe3\x88\xb5\xf8\xe4\x3e\x00\x00\x00\x00\x00\x00\xf0\x3f"},
    {"f64 sci large",
     CUJIT_TYPE_F64,
     1,
     {2},
     "[1.e+08 1.e+00]",
     16,
     "\x00\x00\x00\x00\x84\xd7\x97\x41\x00\x00\x00\x00\x00\x00\xf0\x3f"},
    {"f64 sci span",
     CUJIT_TYPE_F64,
     1,
     {2},
     "[1.0000e+00 1.0005e+03]",
     16,
     "\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x44\x8f\x40"},
    {"f64 sci digits",
     CUJIT_TYPE_F64,
     1,
     {2},
     "[1.5e-05 1.0e+00]",
     16,
     "\x69\x1d\x55\x4d\x10\x75\xef\x3e\x00\x00\x00\x00\x00\x00\xf0\x3f"},
    {"f64 huge tiny",
     CUJIT_TYPE_F64,
     1,
     {3},
     "[ 1.e+300 -1.e-300  5.e-324]",
     24,
     "\x9c\x75\x00\x88\x3c\xe4\x37\x7e\x59\xf3\xf8\xc2\x1f\x6e\xa5\x81\x01\x00\x00\x00\x00\x00\x00"
     "\x00"},
    {"f64 nan inf",
     CUJIT_TYPE_F64,
     1,
     {4},
     "[ nan   1. -inf  inf]",
     32,
     "\x00\x00\x00\x00\x00\x00\xf8\x7f\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\xf0"
     "\xff\x00\x00\x00\x00\x00\x00\xf0\x7f"},
    {"f64 all nonfinite",
     CUJIT_TYPE_F64,
     1,
     {3},
     "[ inf -inf  nan]",
     24,
     "\x00\x00\x00\x00\x00\x00\xf0\x7f\x00\x00\x00\x00\x00\x00\xf0\xff\x00\x00\x00\x00\x00\x00\xf8"
     "\x7f"},
    {"f64 negative zero",
     CUJIT_TYPE_F64,
     1,
     {2},
     "[-0.  0.]",
     16,
     "\x00\x00\x00\x00\x00\x00\x00\x80\x00\x00\x00\x00\x00\x00\x00\x00"},
    {"f64 max min",
     CUJIT_TYPE_F64,
     1,
     {2},
     "[1.79769313e+308 2.22507386e-308]",
     16,
     "\xff\xff\xff\xff\xff\xff\xef\x7f\x00\x00\x00\x00\x00\x00\x10\x00"},
    {"f32 shortest",
     CUJIT_TYPE_F32,
     1,
     {3},
     "[1.0000000e-01 6.6666669e-01 1.6777216e+07]",
     12,
     "\xcd\xcc\xcc\x3d\xab\xaa\x2a\x3f\x00\x00\x80\x4b"},
    {"f32 cutoff",
     CUJIT_TYPE_F32,
     1,
     {2},
     "[9.99999e+05 1.00000e+00]",
     8,
     "\xf0\x23\x74\x49\x00\x00\x80\x3f"},
    {"f32 1e6", CUJIT_TYPE_F32, 1, {1}, "[1.e+06]", 4, "\x00\x24\x74\x49"},
    {"f16", CUJIT_TYPE_F16, 1, {3}, "[1.00e-01 5.00e-01 6.55e+04]", 6, "\x66\x2e\x00\x38\xff\x7b"},
    {"f16 fixed",
     CUJIT_TYPE_F16,
     1,
     {3},
     "[ 1.00e-01 -2.50e+00  9.99e+02]",
     6,
     "\x66\x2e\x00\xc1\xce\x63"},
    {"f16 tiny", CUJIT_TYPE_F16, 1, {2}, "[6.e-08 1.e+00]", 4, "\x01\x00\x00\x3c"},
    {"f16 tie",
     CUJIT_TYPE_F16,
     1,
     {3},
     "[8.192e+03 8.216e+03 8.208e+03]",
     6,
     "\x00\x70\x03\x70\x02\x70"},
    {"c128",
     CUJIT_TYPE_C128,
     1,
     {2},
     "[ 1. +2.j   -3.5-0.25j]",
     32,
     "\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00\x40\x00\x00\x00\x00\x00\x00\x0c"
     "\xc0\x00\x00\x00\x00\x00\x00\xd0\xbf"},
    {"c64",
     CUJIT_TYPE_C64,
     1,
     {2},
     "[1. +2.e+00j 0.1-1.e-07j]",
     16,
     "\x00\x00\x80\x3f\x00\x00\x00\x40\xcd\xcc\xcc\x3d\x95\xbf\xd6\xb3"},
    {"c128 nonfinite",
     CUJIT_TYPE_C128,
     1,
     {2},
     "[nan +1.j inf-infj]",
     32,
     "\x00\x00\x00\x00\x00\x00\xf8\x7f\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\xf0"
     "\x7f\x00\x00\x00\x00\x00\x00\xf0\xff"},
    {"wrapped ints",
     CUJIT_TYPE_I64,
     1,
     {30},
     "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n 24 25 26 27 28 "
     "29]",
     240,
     "\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00"
     "\x00\x03\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00"
     "\x00\x00\x06\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x08\x00\x00\x00\x00"
     "\x00\x00\x00\x09\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x0b\x00\x00\x00"
     "\x00\x00\x00\x00\x0c\x00\x00\x00\x00\x00\x00\x00\x0d\x00\x00\x00\x00\x00\x00\x00\x0e\x00\x00"
     "\x00\x00\x00\x00\x00\x0f\x00\x00\x00\x00\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x11\x00"
     "\x00\x00\x00\x00\x00\x00\x12\x00\x00\x00\x00\x00\x00\x00\x13\x00\x00\x00\x00\x00\x00\x00\x14"
     "\x00\x00\x00\x00\x00\x00\x00\x15\x00\x00\x00\x00\x00\x00\x00\x16\x00\x00\x00\x00\x00\x00\x00"
     "\x17\x00\x00\x00\x00\x00\x00\x00\x18\x00\x00\x00\x00\x00\x00\x00\x19\x00\x00\x00\x00\x00\x00"
     "\x00\x1a\x00\x00\x00\x00\x00\x00\x00\x1b\x00\x00\x00\x00\x00\x00\x00\x1c\x00\x00\x00\x00\x00"
     "\x00\x00\x1d\x00\x00\x00\x00\x00\x00\x00"},
    {"wrapped floats",
     CUJIT_TYPE_F64,
     1,
     {30},
     "[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15. 16. 17.\n 18. 19. 20. 21. "
     "22. 23. 24. 25. 26. 27. 28. 29.]",
     240,
     "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00"
     "\x40\x00\x00\x00\x00\x00\x00\x08\x40\x00\x00\x00\x00\x00\x00\x10\x40\x00\x00\x00\x00\x00\x00"
     "\x14\x40\x00\x00\x00\x00\x00\x00\x18\x40\x00\x00\x00\x00\x00\x00\x1c\x40\x00\x00\x00\x00\x00"
     "\x00\x20\x40\x00\x00\x00\x00\x00\x00\x22\x40\x00\x00\x00\x00\x00\x00\x24\x40\x00\x00\x00\x00"
     "\x00\x00\x26\x40\x00\x00\x00\x00\x00\x00\x28\x40\x00\x00\x00\x00\x00\x00\x2a\x40\x00\x00\x00"
     "\x00\x00\x00\x2c\x40\x00\x00\x00\x00\x00\x00\x2e\x40\x00\x00\x00\x00\x00\x00\x30\x40\x00\x00"
     "\x00\x00\x00\x00\x31\x40\x00\x00\x00\x00\x00\x00\x32\x40\x00\x00\x00\x00\x00\x00\x33\x40\x00"
     "\x00\x00\x00\x00\x00\x34\x40\x00\x00\x00\x00\x00\x00\x35\x40\x00\x00\x00\x00\x00\x00\x36\x40"
     "\x00\x00\x00\x00\x00\x00\x37\x40\x00\x00\x00\x00\x00\x00\x38\x40\x00\x00\x00\x00\x00\x00\x39"
     "\x40\x00\x00\x00\x00\x00\x00\x3a\x40\x00\x00\x00\x00\x00\x00\x3b\x40\x00\x00\x00\x00\x00\x00"
     "\x3c\x40\x00\x00\x00\x00\x00\x00\x3d\x40"},
    {"3-d",
     CUJIT_TYPE_I32,
     3,
     {2, 3, 4},
     "[[[ 0  1  2  3]\n  [ 4  5  6  7]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  "
     "[20 21 22 23]]]",
     96,
     "\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00\x04\x00\x00\x00\x05\x00\x00"
     "\x00\x06\x00\x00\x00\x07\x00\x00\x00\x08\x00\x00\x00\x09\x00\x00\x00\x0a\x00\x00\x00\x0b\x00"
     "\x00\x00\x0c\x00\x00\x00\x0d\x00\x00\x00\x0e\x00\x00\x00\x0f\x00\x00\x00\x10\x00\x00\x00\x11"
     "\x00\x00\x00\x12\x00\x00\x00\x13\x00\x00\x00\x14\x00\x00\x00\x15\x00\x00\x00\x16\x00\x00\x00"
     "\x17\x00\x00\x00"},
    {"4-d",
     CUJIT_TYPE_I8,
     4,
     {2, 2, 2, 2},
     "[[[[ 0  1]\n   [ 2  3]]\n\n  [[ 4  5]\n   [ 6  7]]]\n\n\n [[[ 8  9]\n   [10 11]]\n\n  [[12 "
     "13]\n   [14 15]]]]",
     16,
     "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"},
    {"summarised 1-d",
     CUJIT_TYPE_I64,
     1,
     {2000},
     "[   0    1    2 ... 1997 1998 1999]",
     16000,
     NULL},
    {"summarised 2-d",
     CUJIT_TYPE_F64,
     2,
     {40, 50},
     "[[0.000e+00 1.000e+00 2.000e+00 ... 4.700e+01 4.800e+01 4.900e+01]\n [5.000e+01 5.100e+01 "
     "5.200e+01 ... 9.700e+01 9.800e+01 9.900e+01]\n [1.000e+02 1.010e+02 1.020e+02 ... 1.470e+02 "
     "1.480e+02 1.490e+02]\n ...\n [1.850e+03 1.851e+03 1.852e+03 ... 1.897e+03 1.898e+03 "
     "1.899e+03]\n [1.900e+03 1.901e+03 1.902e+03 ... 1.947e+03 1.948e+03 1.949e+03]\n [1.950e+03 "
     "1.951e+03 1.952e+03 ... 1.997e+03 1.998e+03 1.999e+03]]",
     16000,
     NULL},
    {"summarised 3-d",
     CUJIT_TYPE_I16,
     3,
     {11, 10, 10},
     "[[[   0    1    2 ...    7    8    9]\n  [  10   11   12 ...   17   18   19]\n  [  20   21   "
     "22 ...   27   28   29]\n  ...\n  [  70   71   72 ...   77   78   79]\n  [  80   81   82 ...  "
     " 87   88   89]\n  [  90   91   92 ...   97   98   99]]\n\n [[ 100  101  102 ...  107  108  "
     "109]\n  [ 110  111  112 ...  117  118  119]\n  [ 120  121  122 ...  127  128  129]\n  ...\n  "
     "[ 170  171  172 ...  177  178  179]\n  [ 180  181  182 ...  187  188  189]\n  [ 190  191  "
     "192 ...  197  198  199]]\n\n [[ 200  201  202 ...  207  208  209]\n  [ 210  211  212 ...  "
     "217  218  219]\n  [ 220  221  222 ...  227  228  229]\n  ...\n  [ 270  271  272 ...  277  "
     "278  279]\n  [ 280  281  282 ...  287  288  289]\n  [ 290  291  292 ...  297  298  299]]\n\n "
     "...\n\n [[ 800  801  802 ...  807  808  809]\n  [ 810  811  812 ...  817  818  819]\n  [ 820 "
     " 821  822 ...  827  828  829]\n  ...\n  [ 870  871  872 ...  877  878  879]\n  [ 880  881  "
     "882 ...  887  888  889]\n  [ 890  891  892 ...  897  898  899]]\n\n [[ 900  901  902 ...  "
     "907  908  909]\n  [ 910  911  912 ...  917  918  919]\n  [ 920  921  922 ...  927  928  "
     "929]\n  ...\n  [ 970  971  972 ...  977  978  979]\n  [ 980  981  982 ...  987  988  989]\n  "
     "[ 990  991  992 ...  997  998  999]]\n\n [[1000 1001 1002 ... 1007 1008 1009]\n  [1010 1011 "
     "1012 ... 1017 1018 1019]\n  [1020 1021 1022 ... 1027 1028 1029]\n  ...\n  [1070 1071 1072 "
     "... 1077 1078 1079]\n  [1080 1081 1082 ... 1087 1088 1089]\n  [1090 1091 1092 ... 1097 1098 "
     "1099]]]",
     2200,
     NULL},
    {"1001 elements", CUJIT_TYPE_U8, 1, {1001}, "[  0   1   2 ... 230 231 232]", 1001, NULL},
    {"1000 elements",
     CUJIT_TYPE_U8,
     1,
     {1000},
     "[0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1\n 2 3 4 5 6 0 1 2 "
     "3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3\n 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 "
     "6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5\n 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 "
     "2 3 4 5 6 0 1 2 3 4 5 6 0\n 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 "
     "5 6 0 1 2\n 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4\n 5 6 "
     "0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6\n 0 1 2 3 4 5 6 0 1 2 "
     "3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1\n 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 "
     "6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3\n 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 "
     "2 3 4 5 6 0 1 2 3 4 5\n 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 "
     "5 6 0\n 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2\n 3 4 5 6 "
     "0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4\n 5 6 0 1 2 3 4 5 6 0 1 2 "
     "3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6\n 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 "
     "6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1\n 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 "
     "2 3 4 5 6 0 1 2 3\n 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 "
     "5\n 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0\n 1 2 3 4 5 6 "
     "0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2\n 3 4 5 6 0 1 2 3 4 5 6 0 1 2 "
     "3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4\n 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 "
     "6 0 1 2 3 4 5 6 0 1 2 3 4 5 6\n 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 "
     "2 3 4 5 6 0 1\n 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3\n "
     "4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5\n 6 0 1 2 3 4 5 6 "
     "0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0\n 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 "
     "3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2\n 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 6 0 1 2 3 4 5 "
     "6 0 1 2 3 4 5 6 0 1 2 3 4\n 5]",
     1000,
     NULL},
    {"(6,6,6,6) not cut",
     CUJIT_TYPE_BOOL,
     4,
     {6, 6, 6, 6},
     "[[[[ True False False  True False False]\n   [ True False False  True False False]\n   [ "
     "True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]\n   [ True False False  True False False]]\n\n  [[ True False "
     "False  True False False]\n   [ True False False  True False False]\n   [ True False False  "
     "True False False]\n   [ True False False  True False False]\n   [ True False False  True "
     "False False]\n   [ True False False  True False False]]\n\n  [[ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]]\n\n  [[ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]\n   [ True False False  "
     "True False False]\n   [ True False False  True False False]\n   [ True False False  True "
     "False False]]\n\n  [[ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]]\n\n  [[ "
     "True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]\n   [ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]]]\n\n\n [[[ True False "
     "False  True False False]\n   [ True False False  True False False]\n   [ True False False  "
     "True False False]\n   [ True False False  True False False]\n   [ True False False  True "
     "False False]\n   [ True False False  True False False]]\n\n  [[ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]]\n\n  [[ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]\n   [ True False False  "
     "True False False]\n   [ True False False  True False False]\n   [ True False False  True "
     "False False]]\n\n  [[ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]]\n\n  [[ "
     "True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]\n   [ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]]\n\n  [[ True False False "
     " True False False]\n   [ True False False  True False False]\n   [ True False False  True "
     "False False]\n   [ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]]]\n\n\n [[[ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]]\n\n  [[ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]\n   [ True False False  "
     "True False False]\n   [ True False False  True False False]\n   [ True False False  True "
     "False False]]\n\n  [[ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]]\n\n  [[ "
     "True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]\n   [ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]]\n\n  [[ True False False "
     " True False False]\n   [ True False False  True False False]\n   [ True False False  True "
     "False False]\n   [ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]]\n\n  [[ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]]]\n\n\n [[[ True False False  True False False]\n   [ True "
     "False False  True False False]\n   [ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]\n   [ True False False  "
     "True False False]]\n\n  [[ True False False  True False False]\n   [ True False False  True "
     "False False]\n   [ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False "
     "False]]\n\n  [[ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]]\n\n  [[ "
     "True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]\n   [ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]]\n\n  [[ True False False "
     " True False False]\n   [ True False False  True False False]\n   [ True False False  True "
     "False False]\n   [ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]]\n\n  [[ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]]]\n\n\n [[[ True False False  True False False]\n   [ True "
     "False False  True False False]\n   [ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]\n   [ True False False  "
     "True False False]]\n\n  [[ True False False  True False False]\n   [ True False False  True "
     "False False]\n   [ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False "
     "False]]\n\n  [[ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]]\n\n  [[ "
     "True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]\n   [ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]]\n\n  [[ True False False "
     " True False False]\n   [ True False False  True False False]\n   [ True False False  True "
     "False False]\n   [ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]]\n\n  [[ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]]]\n\n\n [[[ True False False  True False False]\n   [ True "
     "False False  True False False]\n   [ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]\n   [ True False False  "
     "True False False]]\n\n  [[ True False False  True False False]\n   [ True False False  True "
     "False False]\n   [ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False "
     "False]]\n\n  [[ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]]\n\n  [[ "
     "True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]\n   [ True False False  True False False]\n   [ True False "
     "False  True False False]\n   [ True False False  True False False]]\n\n  [[ True False False "
     " True False False]\n   [ True False False  True False False]\n   [ True False False  True "
     "False False]\n   [ True False False  True False False]\n   [ True False False  True False "
     "False]\n   [ True False False  True False False]]\n\n  [[ True False False  True False "
     "False]\n   [ True False False  True False False]\n   [ True False False  True False False]\n "
     "  [ True False False  True False False]\n   [ True False False  True False False]\n   [ True "
     "False False  True False False]]]]",
     1296,
     NULL},
    {"empty", CUJIT_TYPE_F32, 1, {0}, "[]", 0, NULL},
    {"empty 2-d", CUJIT_TYPE_F32, 2, {3, 0}, "[]", 0, NULL},
    {"0-d f64", CUJIT_TYPE_F64, 0, {0}, "1.0", 8, "\x00\x00\x00\x00\x00\x00\xf0\x3f"},
    {"0-d f64 sci", CUJIT_TYPE_F64, 0, {0}, "1e+20", 8, "\x40\x8c\xb5\x78\x1d\xaf\x15\x44"},
    {"0-d f64 long",
     CUJIT_TYPE_F64,
     0,
     {0},
     "0.3333333333333333",
     8,
     "\x55\x55\x55\x55\x55\x55\xd5\x3f"},
    {"0-d f32", CUJIT_TYPE_F32, 0, {0}, "0.1", 4, "\xcd\xcc\xcc\x3d"},
    {"0-d f32 cutoff", CUJIT_TYPE_F32, 0, {0}, "1e+06", 4, "\x00\x24\x74\x49"},
    {"0-d f16", CUJIT_TYPE_F16, 0, {0}, "1e+03", 2, "\xd0\x63"},
    {"0-d nan", CUJIT_TYPE_F64, 0, {0}, "nan", 8, "\x00\x00\x00\x00\x00\x00\xf8\x7f"},
    {"0-d -inf", CUJIT_TYPE_F32, 0, {0}, "-inf", 4, "\x00\x00\x80\xff"},
    {"0-d -0", CUJIT_TYPE_F64, 0, {0}, "-0.0", 8, "\x00\x00\x00\x00\x00\x00\x00\x80"},
    {"0-d c128",
     CUJIT_TYPE_C128,
     0,
     {0},
     "(1+2j)",
     16,
     "\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00\x40"},
    {"0-d c128 imaginary",
     CUJIT_TYPE_C128,
     0,
     {0},
     "2j",
     16,
     "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x40"},
    {"0-d c64 nan", CUJIT_TYPE_C64, 0, {0}, "(nan+infj)", 8, "\x00\x00\xc0\x7f\x00\x00\x80\x7f"},
    {"0-d bool", CUJIT_TYPE_BOOL, 0, {0}, "True", 1, "\x01"},
    {"0-d i64",
     CUJIT_TYPE_I64,
     0,
     {0},
     "-9223372036854775808",
     8,
     "\x00\x00\x00\x00\x00\x00\x00\x80"},
    {"0-d u64",
     CUJIT_TYPE_U64,
     0,
     {0},
     "18446744073709551615",
     8,
     "\xff\xff\xff\xff\xff\xff\xff\xff"},
    /* bfloat16, which NumPy lacks: NumPy's rules with its own precision (2 digits: fixed
     * notation below 100) and its own shortest digits (0.1 is 0x3dcd, 0.10009765625) */
    {"bf16", CUJIT_TYPE_BF16, 1, {2}, "[1.5 2. ]", 4, "\xc0\x3f\x00\x40"},
    {"bf16 cutoff", CUJIT_TYPE_BF16, 1, {2}, "[1.e+02 1.e+00]", 4, "\xc8\x42\x80\x3f"},
    {"bf16 shortest", CUJIT_TYPE_BF16, 1, {1}, "[0.1]", 2, "\xcd\x3d"},
    {"0-d bf16", CUJIT_TYPE_BF16, 0, {0}, "1.5", 2, "\xc0\x3f"},
    {"0-d bf16 sci", CUJIT_TYPE_BF16, 0, {0}, "1e+02", 2, "\xc8\x42"},
};

/* The bytes of the larger arrays of kExpect: aranges, and a few patterns. */
static void *fill_big(const expect *e) {
  int64_t n = 1, k;
  int d;
  char *p;
  for (d = 0; d < e->ndim; d++) n *= e->shape[d];
  p = malloc(e->nbytes ? e->nbytes : 1);
  for (k = 0; k < n; k++) {
    switch (e->type) {
      case CUJIT_TYPE_I64: ((int64_t *)p)[k] = k; break;
      case CUJIT_TYPE_F64: ((double *)p)[k] = (double)k; break;
      case CUJIT_TYPE_I16: ((int16_t *)p)[k] = (int16_t)k; break;
      case CUJIT_TYPE_U8: ((uint8_t *)p)[k] = (uint8_t)(n == 1001 ? k % 256 : k % 7); break;
      case CUJIT_TYPE_BOOL: ((uint8_t *)p)[k] = k % 3 == 0; break;
      default: fail_msg("%s: no pattern for this type", e->name);
    }
  }
  return p;
}

static const void *bytes_of(const expect *e, void **owned) {
  *owned = NULL;
  if (e->bytes || !e->nbytes) return e->bytes;
  return *owned = fill_big(e);
}

/* ---- host memory: NumPy's text ---- */

static void every_type_as_numpy_prints_it(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof kExpect / sizeof *kExpect; i++) {
    const expect *e = &kExpect[i];
    char buf[16384];
    size_t len = 0;
    void *owned;
    const void *host = bytes_of(e, &owned);
    assert_ok(cujit_array_format_host(e->type, e->ndim, e->shape, host, buf, sizeof buf, &len));
    if (strcmp(buf, e->text) != 0) fail_msg("%s:\nwant %s\ngot  %s", e->name, e->text, buf);
    assert_int_equal(len, strlen(e->text));
    free(owned);
  }
}

/* snprintf's contract: size 0 measures, a short buffer holds the beginning and a NUL, and
 * the length is the whole text's. */
static void buffer_as_snprintf(void **state) {
  const double v[3] = {1.5, 2.25, -3.0}; /* "[ 1.5   2.25 -3.  ]" */
  const char *want = "[ 1.5   2.25 -3.  ]";
  const int64_t n = 3;
  char buf[64];
  size_t len = 99;
  (void)state;
  assert_ok(cujit_array_format_host(CUJIT_TYPE_F64, 1, &n, v, NULL, 0, &len));
  assert_int_equal(len, strlen(want));
  memset(buf, 'x', sizeof buf);
  assert_ok(cujit_array_format_host(CUJIT_TYPE_F64, 1, &n, v, buf, 6, &len));
  assert_string_equal(buf, "[ 1.5");
  assert_int_equal(buf[6], 'x'); /* nothing past the buffer */
  assert_int_equal(len, strlen(want));
  assert_ok(cujit_array_format_host(CUJIT_TYPE_F64, 1, &n, v, buf, strlen(want) + 1, NULL));
  assert_string_equal(buf, want);
  assert_ok(cujit_array_format_host(CUJIT_TYPE_F64, 1, &n, v, buf, strlen(want), &len));
  assert_int_equal(strlen(buf), strlen(want) - 1); /* one short: the NUL takes the last */
  assert_ok(cujit_array_format_host(CUJIT_TYPE_F64, 1, &n, v, buf, 1, &len));
  assert_string_equal(buf, "");
}

/* Only the elements shown are read: a summarised array's middle may be anything. */
static void summary_reads_only_the_corners(void **state) {
  const int64_t shape[2] = {100, 100};
  double *v = malloc(100 * 100 * sizeof *v);
  char a[4096], b[4096];
  int i;
  (void)state;
  for (i = 0; i < 100 * 100; i++) v[i] = i;
  assert_ok(cujit_array_format_host(CUJIT_TYPE_F64, 2, shape, v, a, sizeof a, NULL));
  for (i = 0; i < 100 * 100; i++)
    if (i / 100 >= 3 && i / 100 < 97) v[i] = 1e300; /* rows never shown */
  assert_ok(cujit_array_format_host(CUJIT_TYPE_F64, 2, shape, v, b, sizeof b, NULL));
  assert_string_equal(a, b);
  assert_non_null(strstr(a, "...\n [9.700e+03"));
  free(v);
}

static void format_host_refusals(void **state) {
  const int64_t n = 2, negative = -1, big[3] = {1 << 30, 1 << 30, 1 << 30};
  const float v[2] = {1, 2};
  char buf[16];
  (void)state;
  assert_status_detail(cujit_array_format_host(CUJIT_TYPE_PTR, 1, &n, v, buf, sizeof buf, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "is not an element type");
  assert_status_detail(cujit_array_format_host((cujit_type)99, 1, &n, v, buf, sizeof buf, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "type 99");
  assert_status_detail(cujit_array_format_host(CUJIT_TYPE_F32, 5, &n, v, buf, sizeof buf, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "ndim is 5");
  assert_status_detail(cujit_array_format_host(CUJIT_TYPE_F32, -1, &n, v, buf, sizeof buf, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "ndim is -1");
  assert_status_detail(cujit_array_format_host(CUJIT_TYPE_F32, 1, NULL, v, buf, sizeof buf, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "shape is NULL");
  assert_status_detail(cujit_array_format_host(CUJIT_TYPE_F32, 1, &negative, v, buf, sizeof buf,
                                               NULL),
                       CUJIT_ERROR_INVALID_VALUE, "shape[0] is -1");
  assert_status_detail(cujit_array_format_host(CUJIT_TYPE_F32, 3, big, v, buf, sizeof buf, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "more than 2^62");
  assert_status_detail(cujit_array_format_host(CUJIT_TYPE_F32, 1, &n, NULL, buf, sizeof buf, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "host is NULL");
  assert_status_detail(cujit_array_format_host(CUJIT_TYPE_F32, 1, &n, v, NULL, 4, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "buf is NULL and size is 4");
  /* an empty shape needs no data */
  assert_ok(cujit_array_format_host(CUJIT_TYPE_F32, 1, (const int64_t[]){0}, NULL, buf, sizeof buf,
                                    NULL));
  assert_string_equal(buf, "[]");
}

/* ---- device arrays, on the checking fake driver ---- */

static checkdriver_api cd;
static int have_fake;

/* Asserts that the fake driver saw nothing wrong. */
static void clean(void) {
  char text[8192];
  unsigned long n = cd.violations();
  cd.report(text, sizeof text);
  if (n) fail_msg("%lu violations:\n%s", n, text);
}

static int fake_or_skip(void) {
  if (have_fake) return 1;
  test_skip_part("the device parts need the checking fake driver (CUJIT_LIBCUDA)\n");
  return 0;
}

static cujit_array *upload(const expect *e) {
  cujit_array *a = NULL;
  void *owned;
  const void *host = bytes_of(e, &owned);
  assert_ok(cujit_array_from_host(&a, (cujit_type)e->type, e->ndim, e->shape, host));
  free(owned);
  return a;
}

/* The device arrays print as their host bytes do; a 1-D summarised array is read by its two
 * corners (contiguous views, which the fake driver copies), 2-D and up need the GPU. */
static void device_arrays_format_as_numpy(void **state) {
  size_t i;
  (void)state;
  if (!fake_or_skip()) return;
  for (i = 0; i < sizeof kExpect / sizeof *kExpect; i++) {
    const expect *e = &kExpect[i];
    cujit_array *a;
    char buf[16384];
    size_t len = 0;
    int summarised_nd = e->ndim > 1 && e->nbytes / cujit_type_size((cujit_type)e->type) > 1000 &&
                        strcmp(e->name, "(6,6,6,6) not cut") != 0;
    if (summarised_nd) continue; /* its corners are strided views: the GPU group prints them */
    a = upload(e);
    assert_ok(cujit_array_format(a, buf, sizeof buf, &len));
    if (strcmp(buf, e->text) != 0) fail_msg("%s:\nwant %s\ngot  %s", e->name, e->text, buf);
    assert_int_equal(len, strlen(e->text));
    cujit_array_destroy(a);
  }
  clean();
}

static void print_writes_the_text_and_a_newline(void **state) {
  const expect *e = &kExpect[0]; /* bool */
  cujit_array *a;
  char got[256] = "";
  FILE *f;
  size_t n;
  (void)state;
  if (!fake_or_skip()) return;
  a = upload(e);
  f = tmpfile();
  assert_non_null(f);
  assert_ok(cujit_array_print(a, f));
  rewind(f);
  n = fread(got, 1, sizeof got - 1, f);
  got[n] = '\0';
  fclose(f);
  assert_int_equal(n, strlen(e->text) + 1);
  assert_memory_equal(got, e->text, strlen(e->text));
  assert_int_equal(got[n - 1], '\n');
  /* a stream that cannot be written */
  f = fopen("/dev/null", "r");
  assert_non_null(f);
  assert_status_detail(cujit_array_print(a, f), CUJIT_ERROR_FILE, "writing the array's text");
  fclose(f);
  assert_status_detail(cujit_array_print(a, NULL), CUJIT_ERROR_INVALID_VALUE, "stream is NULL");
  {
    char buf[8];
    size_t len = 0;
    assert_ok(cujit_array_format(a, NULL, 0, &len));
    assert_int_equal(len, strlen(e->text));
    assert_ok(cujit_array_format(a, buf, sizeof buf, NULL));
    assert_string_equal(buf, "[ True ");
    assert_status_detail(cujit_array_format(a, NULL, 3, &len), CUJIT_ERROR_INVALID_VALUE,
                         "buf is NULL");
  }
  cujit_array_destroy(a);
  assert_status_detail(cujit_array_print(a, stdout), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_print: a is not a live array");
  assert_status_detail(cujit_array_format(NULL, NULL, 0, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_format: a is NULL");
  clean();
}

/* What cujit_array_reduce_host and cujit_array_dot_host refuse, before any work; and their
 * whole path (a kernel, the 0-d result read, freed) on the fake driver, whose kernels
 * compute nothing: the statuses and the memory, not the values. */
static void reduce_host_checks(void **state) {
  const int64_t n = 4;
  cujit_array *f32 = NULL, *i32 = NULL, *c64 = NULL;
  float fr;
  double d;
  int64_t ir;
  (void)state;
  if (!fake_or_skip()) return;
  assert_ok(cujit_array_zeros(&f32, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_zeros(&i32, CUJIT_TYPE_I32, 1, &n));
  assert_ok(cujit_array_zeros(&c64, CUJIT_TYPE_C64, 1, &n));
  assert_status_detail(cujit_array_reduce_host(CUJIT_REDOP_MAX, f32, &d, sizeof d, NULL),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_reduce_host: the max of an array of f32 is a float (f32) (4 "
                       "bytes), and result is 8 bytes");
  assert_status_detail(cujit_array_reduce_host(CUJIT_REDOP_SUM, i32, &fr, sizeof fr, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "the sum of an array of i32 is");
  assert_status_detail(cujit_array_reduce_host(CUJIT_REDOP_SUM, f32, NULL, 0, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "result and value are NULL");
  assert_status_detail(cujit_array_reduce_host(CUJIT_REDOP_SUM, f32, NULL, 4, &d),
                       CUJIT_ERROR_INVALID_VALUE, "result is NULL and bytes is 4");
  assert_status_detail(cujit_array_reduce_host(CUJIT_REDOP_SUM, c64, NULL, 0, &d),
                       CUJIT_ERROR_INVALID_VALUE, "which no double holds");
  assert_status_detail(cujit_array_reduce_host((cujit_redop)42, f32, &fr, sizeof fr, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "op is 42");
  assert_status_detail(cujit_array_reduce_host(CUJIT_REDOP_MIN, NULL, &fr, sizeof fr, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_array_reduce_host: a is NULL");
  assert_status_detail(cujit_array_dot_host(f32, i32, &fr, sizeof fr, NULL),
                       CUJIT_ERROR_INVALID_VALUE,
                       "the dot product of arrays of f32 and i32 is a double (f64)");
  /* the whole path, messages naming the call */
  assert_ok(cujit_array_reduce_host(CUJIT_REDOP_MAX, f32, &fr, sizeof fr, &d));
  assert_ok(cujit_array_reduce_host(CUJIT_REDOP_ARGMAX, i32, &ir, sizeof ir, NULL));
  assert_ok(cujit_array_dot_host(f32, f32, NULL, 0, &d));
  {
    cujit_array *empty = NULL;
    assert_ok(cujit_array_zeros(&empty, CUJIT_TYPE_F32, 1, (const int64_t[]){0}));
    assert_status_detail(cujit_array_reduce_host(CUJIT_REDOP_MIN, empty, &fr, sizeof fr, NULL),
                         CUJIT_ERROR_INVALID_VALUE,
                         "cujit_array_reduce_host: the min of an empty array is undefined");
    cujit_array_destroy(empty);
  }
  assert_ok(cujit_synchronize());
  clean();
  cujit_array_destroy(f32);
  cujit_array_destroy(i32);
  cujit_array_destroy(c64);
}

static void allclose_checks(void **state) {
  const int64_t n = 4, m = 3;
  const float host[4] = {0, 0, 0, 0};
  cujit_array *a = NULL, *b = NULL, *c = NULL;
  int close = -1;
  (void)state;
  if (!fake_or_skip()) return;
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_zeros(&b, CUJIT_TYPE_F64, 1, &n));
  assert_ok(cujit_array_zeros(&c, CUJIT_TYPE_F32, 1, &m));
  assert_status_detail(cujit_array_allclose(a, c, 1e-5, 1e-8, 0, &close), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_allclose: a has shape (4,) and b (3,)");
  assert_status_detail(cujit_array_allclose(a, b, 1e-5, 1e-8, 0, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "close is NULL");
  assert_status_detail(cujit_array_allclose(a, NULL, 1e-5, 1e-8, 0, &close),
                       CUJIT_ERROR_INVALID_VALUE, "b is NULL");
  assert_status_detail(cujit_array_allclose_host(a, host, 8, 1e-5, 1e-8, 0, &close),
                       CUJIT_ERROR_INVALID_VALUE,
                       "b is 8 bytes; give a's elements (16 bytes: its shape, C order, of a's "
                       "type f32) or one f32 element (4 bytes)");
  assert_status_detail(cujit_array_allclose_host(a, NULL, 16, 1e-5, 1e-8, 0, &close),
                       CUJIT_ERROR_INVALID_VALUE, "b is NULL");
  assert_int_equal(close, -1); /* nothing written on failure */
  /* every pair of element types compiles and passes the launch checks; host data too,
   * whole and one element; the values are the GPU group's */
  assert_ok(cujit_array_allclose(a, b, 1e-5, 1e-8, 0, &close));
  assert_ok(cujit_array_allclose(b, a, 1e-5, 1e-8, 1, &close));
  assert_ok(cujit_array_allclose_host(a, host, sizeof host, 1e-5, 1e-8, 0, &close));
  assert_ok(cujit_array_allclose_host(a, host, sizeof host[0], 1e-5, 1e-8, 0, &close));
  {
    cujit_array *e1 = NULL, *e2 = NULL;
    assert_ok(cujit_array_zeros(&e1, CUJIT_TYPE_F32, 1, (const int64_t[]){0}));
    assert_ok(cujit_array_zeros(&e2, CUJIT_TYPE_I8, 1, (const int64_t[]){0}));
    close = -1;
    assert_ok(cujit_array_allclose(e1, e2, 0, 0, 0, &close));
    assert_int_equal(close, 1); /* no element: close, as numpy.allclose([], []) */
    cujit_array_destroy(e1);
    cujit_array_destroy(e2);
  }
  assert_ok(cujit_synchronize());
  clean();
  cujit_array_destroy(a);
  cujit_array_destroy(b);
  cujit_array_destroy(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_type_as_numpy_prints_it),
      cmocka_unit_test(buffer_as_snprintf),
      cmocka_unit_test(summary_reads_only_the_corners),
      cmocka_unit_test(format_host_refusals),
      cmocka_unit_test(device_arrays_format_as_numpy),
      cmocka_unit_test(print_writes_the_text_and_a_newline),
      cmocka_unit_test(reduce_host_checks),
      cmocka_unit_test(allclose_checks),
  };
  int n = 0;
  have_fake = getenv("CUJIT_LIBCUDA") && cujit_device_get_count(&n) == CUJIT_OK && n > 0 &&
              checkdriver_open(getenv("CUJIT_LIBCUDA"), &cd) == 0;
  return test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
}
