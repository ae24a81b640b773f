!> Bindings of asyncsolve-stencil2d-caf to its C++ side (caf_support.cpp):
!> options, the initial field, the filter's weights, the serial reference,
!> the table and the document. All local to the calling image.
module stencil2d_caf_support
  use, intrinsic :: iso_c_binding, only: c_char, c_double, c_int, c_long_long
  implicit none
  private

  integer, parameter, public :: max_sizes = 64

  !> The validated options (struct asyncsolve_caf_config: same members, same order).
  type, bind(C), public :: caf_config
    integer(c_int) :: local_count = 0
    integer(c_int) :: local(max_sizes) = 0
    integer(c_int) :: radius = 1
    integer(c_int) :: repeats = 1
    integer(c_long_long) :: iterations = 1
    integer(c_long_long) :: warmup = 0
    integer(c_int) :: variant_count = 0
    integer(c_int) :: variants(5) = 0
    integer(c_int) :: px = 1
    integer(c_int) :: py = 1
    integer(c_int) :: corrupt_corner = 0
    real(c_double) :: validation_tol = 0
  end type caf_config

  public :: caf_setup, caf_check_json, caf_banner, caf_initial, caf_weights, caf_reference
  public :: caf_record, caf_validation_failed, caf_finish, caf_exit

  interface
    !> 0: run; 1: --help (printed if print /= 0); 2: bad input (one line).
    integer(c_int) function caf_setup(argc, args, images, print, config) &
        bind(C, name="asyncsolve_caf_setup")
      import :: c_int, c_char, caf_config
      integer(c_int), value :: argc
      character(kind=c_char), intent(in) :: args(*)
      integer(c_int), value :: images, print
      type(caf_config), intent(out) :: config
    end function caf_setup

    !> 0, or 2 (one line on stderr) if the --json path cannot be written.
    integer(c_int) function caf_check_json() bind(C, name="asyncsolve_caf_check_json")
      import :: c_int
    end function caf_check_json

    subroutine caf_banner(images) bind(C, name="asyncsolve_caf_banner")
      import :: c_int
      integer(c_int), value :: images
    end subroutine caf_banner

    !> kernels::stencil2d_initial at the 0-based global point (gx, gy).
    real(c_double) function caf_initial(gx, gy) bind(C, name="asyncsolve_caf_initial")
      import :: c_double, c_long_long
      integer(c_long_long), value :: gx, gy
    end function caf_initial

    !> kernels::Filter2d's weights into w(-r:r, -r:r).
    subroutine caf_weights(radius, w) bind(C, name="asyncsolve_caf_weights")
      import :: c_int, c_double
      integer(c_int), value :: radius
      real(c_double), intent(out) :: w(*)
    end subroutine caf_weights

    !> kernels::filter2d_serial into field(size_x, size_y); 0, or 4.
    integer(c_int) function caf_reference(size_x, size_y, radius, iterations, field) &
        bind(C, name="asyncsolve_caf_reference")
      import :: c_int, c_long_long, c_double
      integer(c_int), value :: size_x, size_y, radius
      integer(c_long_long), value :: iterations
      real(c_double), intent(out) :: field(*)
    end function caf_reference

    subroutine caf_record(variant, local, halo_bytes, calls, syncs, repeats, iteration_us, &
                          exchange_us, filter_us) bind(C, name="asyncsolve_caf_record")
      import :: c_int, c_long_long, c_double
      integer(c_int), value :: variant, local
      integer(c_long_long), value :: halo_bytes, calls, syncs
      integer(c_int), value :: repeats
      real(c_double), intent(in) :: iteration_us(*), exchange_us(*), filter_us(*)
    end subroutine caf_record

    subroutine caf_validation_failed(variant, local, images, repeat, total, gx, gy, size_x, &
                                     size_y, got, expected, wrong) &
        bind(C, name="asyncsolve_caf_validation_failed")
      import :: c_int, c_long_long, c_double
      integer(c_int), value :: variant, local, images, repeat
      integer(c_long_long), value :: total, gx, gy, size_x, size_y
      real(c_double), value :: got, expected
      integer(c_long_long), value :: wrong
    end subroutine caf_validation_failed

    !> Finalises the coarray runtime and ends this image with status `code`.
    !> Collective in effect: every image calls it after the same sync all.
    subroutine caf_exit(code) bind(C, name="asyncsolve_caf_exit")
      import :: c_int
      integer(c_int), value :: code
    end subroutine caf_exit

    !> The table on stdout and the document; 0, or 4 (one line on stderr).
    integer(c_int) function caf_finish(images) bind(C, name="asyncsolve_caf_finish")
      import :: c_int
      integer(c_int), value :: images
    end function caf_finish
  end interface

end module stencil2d_caf_support
