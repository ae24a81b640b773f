! NAME     asyncsolve-stencil2d-caf
! PURPOSE  Paper 004's Stencil2D in the language the paper measured: is Coarray
!          Fortran as fast as an MPI halo exchange? The slides' CAF variants
!          trivial, put, get, get0 and get1 (stencil2d_caf_variants.f90) on
!          the same periodic domain, radius, filter, validation and document
!          as `asyncsolve bench stencil2d`, so the lab plots them side by side.
! USAGE    cafrun -np P asyncsolve-stencil2d-caf [--local 256 | 64,128,256]
!          [--radius 1] [-i 100] [-x 5] [--repeats 5]
!          [--variant all|trivial,put,get,get0,get1] [--grid PXxPY] [--json FILE]
!          (or mpirun -np P; built with OpenCoarrays' caf over Open MPI)
! OUTPUT   a table from image 1; with --json, the document
!          asyncsolve.bench.stencil2d/1 with "model": "caf" (docs/benchmarks.md,
!          "asyncsolve-stencil2d-caf").
!
! Weak scaling: every image owns an n x n block of the periodic (px n) x
! (py n) domain. For each local size the coarray is allocated once; each
! repeat runs each variant in turn (interleaved, so drift affects all alike):
! reset to the initial field, -x untimed iterations, sync all, -i timed
! iterations. Every repeat's final field is compared with the serial filter
! (kernels::filter2d_serial, computed once per size on image 1 and put into
! every image's block of a coarray) before its time is kept; a mismatch stops
! the run with exit 4 and one line naming the variant and the first wrong
! point. Times: per image, then the maximum over images (co_max).
!
! Errors: bad input (options) is found identically on every image; image 1
! prints one line and all images stop together with exit status 2
! (stop_all). Exit codes as the asyncsolve command: 0 success, 2 bad input,
! 4 runtime failure (validation, the document).
program stencil2d_caf
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_long_long, c_null_char
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use stencil2d_caf_support
  use stencil2d_caf_variants
  implicit none

  type(caf_config) :: config
  integer :: images, s, v, repeat, status, variant
  integer(int64) :: total
  real(real64) :: total_s, filter_s, exchange_s, it
  real(real64), allocatable :: iteration_us(:, :), exchange_us(:, :), filter_us(:, :)
  real(real64), allocatable :: ref(:, :)[:]
  logical :: root

  images = num_images()
  root = this_image() == 1

  ! Options: parsed on every image (same argv, same verdict); image 1 speaks.
  status = caf_setup(int(command_argument_count() + 1, c_int), command_words(), &
                     int(images, c_int), merge(1_c_int, 0_c_int, root), config)
  if (status == 1) call stop_all(0)  ! --help
  if (status /= 0) call stop_all(2)
  status = 0
  if (root) status = caf_check_json()
  call co_broadcast(status, source_image=1)
  if (status /= 0) call stop_all(2)
  if (root) call caf_banner(int(images, c_int))

  total = config%warmup + config%iterations
  it = real(config%iterations, real64)
  allocate (iteration_us(config%repeats, config%variant_count), &
            exchange_us(config%repeats, config%variant_count), &
            filter_us(config%repeats, config%variant_count))
  do s = 1, config%local_count
    call stencil_setup(int(config%local(s)), int(config%radius), int(config%px), &
                       int(config%py), config%corrupt_corner /= 0)
    call scatter_reference(int(config%local(s)))
    do repeat = 1, config%repeats
      do v = 1, config%variant_count
        variant = config%variants(v)
        call stencil_reset()
        sync all  ! no image still reads what the previous run left
        if (config%warmup > 0) call stencil_run(variant, config%warmup, total_s, filter_s)
        sync all
        call stencil_run(variant, config%iterations, total_s, filter_s)
        ! Validate before the time is kept.
        call validate(variant, int(config%local(s)), repeat)
        ! Per iteration, this image's, then the slowest image's (each figure apart).
        exchange_s = (total_s - filter_s)/it
        total_s = total_s/it
        filter_s = filter_s/it
        call co_max(total_s)
        call co_max(exchange_s)
        call co_max(filter_s)
        iteration_us(repeat, v) = total_s*1e6_real64
        exchange_us(repeat, v) = exchange_s*1e6_real64
        filter_us(repeat, v) = filter_s*1e6_real64
      end do
    end do
    if (root) then
      do v = 1, config%variant_count
        call caf_record(int(config%variants(v), c_int), int(config%local(s), c_int), &
                        int(stencil_halo_bytes(), c_long_long), &
                        int(stencil_calls_per_iteration(int(config%variants(v))), c_long_long), &
                        int(stencil_syncs_per_iteration(int(config%variants(v))), c_long_long), &
                        int(config%repeats, c_int), iteration_us(:, v), exchange_us(:, v), &
                        filter_us(:, v))
      end do
    end if
    deallocate (ref)
    call stencil_free()
  end do

  status = 0
  if (root) status = caf_finish(int(images, c_int))
  call co_broadcast(status, source_image=1)
  if (status /= 0) call stop_all(int(status))

contains

  !> The command line, NUL-separated (the program name first), for caf_setup.
  function command_words() result(words)
    character(kind=c_char, len=:), allocatable :: words
    character(len=:), allocatable :: arg
    integer :: a, length
    words = ""
    do a = 0, command_argument_count()
      call get_command_argument(a, length=length)
      allocate (character(len=length) :: arg)
      call get_command_argument(a, arg)
      words = words//arg//c_null_char
      deallocate (arg)
    end do
  end function command_words

  !> Every image stops with `code`, once image 1 has printed its line: all
  !> images reach this point together (the errors are found collectively),
  !> so the runtime is finalised and each image exits with the code. (An
  !> `error stop code` would end the job too, but through MPI_Abort, which
  !> makes mpirun add its own messages to the one line.)
  subroutine stop_all(code)
    integer, intent(in) :: code
    sync all
    call caf_exit(int(code, c_int))
  end subroutine stop_all

  !> Collective: image 1 runs the serial filter on the whole domain for the
  !> run's iteration count and puts every image's block into ref(:, :)[image].
  subroutine scatter_reference(local)
    integer, intent(in) :: local
    real(real64), allocatable :: global(:, :)
    integer :: image, x, y, code

    allocate (ref(local, local)[*])
    code = 0
    if (root) then
      allocate (global(config%px*local, config%py*local))
      code = caf_reference(int(config%px*local, c_int), int(config%py*local, c_int), &
                           config%radius, int(total, c_long_long), global)
      if (code == 0) then
        do y = 1, config%py
          do x = 1, config%px
            image = stencil_image_of(x, y)
            ref(:, :)[image] = global((x - 1)*local + 1:x*local, (y - 1)*local + 1:y*local)
          end do
        end do
      end if
      deallocate (global)
    end if
    call co_broadcast(code, source_image=1)
    if (code /= 0) call stop_all(code)
    sync all  ! every block has arrived
  end subroutine scatter_reference

  !> Collective: this image's block against its part of the reference
  !> (relative tolerance); on a mismatch image 1 names the first wrong point
  !> (row-major order of the global domain) and every image stops with 4.
  subroutine validate(variant, local, repeat)
    integer, intent(in) :: variant, local, repeat
    real(real64), pointer :: field(:, :)
    integer(int64) :: first, wrong, linear, size_x
    real(real64) :: values(2), tol
    integer :: i, j, cx, cy

    field => stencil_field()
    call stencil_coordinates(cx, cy)
    size_x = int(config%px, int64)*local
    tol = config%validation_tol
    first = huge(first)
    wrong = 0
    values = 0
    do j = 1, local
      do i = 1, local
        if (abs(field(i, j) - ref(i, j)) <= tol*max(1.0_real64, abs(ref(i, j)))) cycle
        wrong = wrong + 1
        linear = (int(cy - 1, int64)*local + j - 1)*size_x + int(cx - 1, int64)*local + i - 1
        if (linear < first) then
          first = linear
          values = [field(i, j), ref(i, j)]
        end if
      end do
    end do
    linear = first
    call co_min(first)
    call co_sum(wrong)
    if (wrong == 0) return
    if (linear /= first) values = 0
    call co_sum(values)
    if (root) call caf_validation_failed(int(variant, c_int), int(local, c_int), &
                                         int(images, c_int), int(repeat, c_int), &
                                         int(total, c_long_long), int(mod(first, size_x), &
                                         c_long_long), int(first/size_x, c_long_long), &
                                         int(size_x, c_long_long), &
                                         int(config%py, c_long_long)*local, values(1), &
                                         values(2), int(wrong, c_long_long))
    call stop_all(4)
  end subroutine validate

end program stencil2d_caf
