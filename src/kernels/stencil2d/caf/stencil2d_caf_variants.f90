!> Paper 004's Stencil2D in Coarray Fortran, the five variants of the slides
!> (Sawyer, Isakov, Tineo: "User experiments with PGAS languages"):
!>
!>   trivial  copies to the remote images (8 coindexed assignments), sync all,
!>            filter
!>   put      reciprocal puts between image pairs; the filter of the
!>            exclusive (inner) region while they travel; a pair-wise
!>            handshake (sync images) before each border strip
!>   get      reciprocal gets between image pairs (8 bulk coindexed reads)
!>   get0     all images filter the inner region first, then get the halo
!>            row by row (fine grain) and filter the border
!>   get1     half of the images (even myP + myQ) as get0, the other half
!>            get the halo and filter the border first, then the inner region
!>
!> The layout is the slides': V(1-r:n+r, 1-r:n+r)[p,*] holds the block with
!> its halos of width r, dom(1:n, 1:n) the block; image (myP, myQ) of the
!> p x q grid owns the global points ((myP-1) n .. myP n - 1) x ((myQ-1) n ..
!> myQ n - 1) of the periodic (p n) x (q n) domain; x is the first index
!> (east +1), y the second (north +1). One iteration is V(interior) = dom,
!> the halo exchange, dom = filter(V), the filter being kernels::Filter2d's
!> weights summed in its order (l outer, k inner).
!>
!> Synchronisation, and where it goes beyond the slides. A coarray program
!> must order every remote access against the local accesses to the same
!> data with image control statements (Fortran 2018, 11.6.2). The slides
!> show one synchronisation per iteration; one is not enough without double
!> buffering, because an image may then write a neighbour's halo (put) or
!> its own block (get) while the neighbour still reads it from the previous
!> iteration. So:
!>   trivial  two sync all per iteration: before the puts (every image has
!>            filtered, its halo may be overwritten) and after them (every
!>            halo has arrived);
!>   others   two handshakes per iteration: "ready" (after the puts, or after
!>            V(interior) = dom for the gets) and "consumed" (after the last
!>            read of the data the neighbours wrote or will overwrite).
!> A handshake is the slides' pair-wise loop: along x, in mode 0 the images
!> with an even myP synchronise with the west neighbour and the others with
!> the east one, in mode 1 the other way round (every image meets both
!> neighbours once, and the waits cannot form a cycle); then the same along
!> y. Only faces synchronise: a diagonal neighbour's data is ordered by
!> transitivity (NE's put precedes NE's x-handshake with N, which precedes
!> N's y-handshake with this image). Along an axis of one image both
!> neighbours are the image itself and there is nothing to wait for.
!>
!> Timing: the whole loop per image, and the time spent in the filter;
!> exchange = total - filter (copy-in, communication, synchronisation).
module stencil2d_caf_variants
  use, intrinsic :: iso_c_binding, only: c_double, c_int, c_long_long
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use stencil2d_caf_support, only: caf_initial, caf_weights
  implicit none
  private

  integer, parameter, public :: variant_trivial = 1, variant_put = 2, variant_get = 3, &
                                variant_get0 = 4, variant_get1 = 5

  public :: stencil_setup, stencil_free, stencil_reset, stencil_run, stencil_field
  public :: stencil_calls_per_iteration, stencil_syncs_per_iteration, stencil_halo_bytes
  public :: stencil_image_of, stencil_coordinates

  real(real64), allocatable :: V(:, :)[:, :]  ! the block with halos, V(1-r:n+r, 1-r:n+r)[p,*]
  real(real64), allocatable, target :: dom(:, :)  ! the block, dom(1:n, 1:n)
  real(real64), allocatable :: w(:, :)        ! the filter's weights, w(-r:r, -r:r)
  integer :: n = 0, r = 0                     ! block size, halo width
  integer :: p = 1, q = 1                     ! images along x and y
  integer :: me = 1, myP = 1, myQ = 1         ! this image and its coordinates (1-based)
  integer :: WW = 1, EE = 1, SS = 1, NN = 1   ! the neighbours' coordinates (periodic)
  logical :: corrupt = .false.                ! the test hook
  logical :: interleave = .true.              ! put: filter a strip right after its sync
  integer(int64) :: filter_ticks = 0          ! clock ticks in the filter during run()

contains

  !> The image at grid coordinates (x, y), 1-based, as V(...)[x, y] addresses it.
  pure integer function stencil_image_of(x, y)
    integer, intent(in) :: x, y
    stencil_image_of = x + (y - 1)*p
  end function stencil_image_of

  !> This image's grid coordinates.
  subroutine stencil_coordinates(x, y)
    integer, intent(out) :: x, y
    x = myP
    y = myQ
  end subroutine stencil_coordinates

  !> Collective (allocates the coarray): n x n blocks with halos of width r
  !> on the px x py grid of images. `corrupt_corner`: the last image adds 1
  !> to the first point of its north-east halo corner every time its halo is
  !> complete, so that validation must fail.
  subroutine stencil_setup(local, radius, px, py, corrupt_corner)
    integer, intent(in) :: local, radius, px, py
    logical, intent(in) :: corrupt_corner
    integer :: co(2)

    n = local
    r = radius
    p = px
    q = py
    corrupt = corrupt_corner
    interleave = 2*r <= n
    allocate (V(1 - r:n + r, 1 - r:n + r)[p, *])
    allocate (dom(n, n), w(-r:r, -r:r))
    V = 0
    call caf_weights(int(r, c_int), w)
    me = this_image()
    co = this_image(V)
    myP = co(1)
    myQ = co(2)
    WW = myP - 1; if (WW < 1) WW = p
    EE = myP + 1; if (EE > p) EE = 1
    SS = myQ - 1; if (SS < 1) SS = q
    NN = myQ + 1; if (NN > q) NN = 1
    call stencil_reset()
  end subroutine stencil_setup

  !> Collective (deallocates the coarray).
  subroutine stencil_free()
    if (allocated(V)) deallocate (V)
    if (allocated(dom)) deallocate (dom, w)
  end subroutine stencil_free

  !> Local: dom = the initial field (kernels::stencil2d_initial) of this block.
  subroutine stencil_reset()
    integer :: i, j
    do j = 1, n
      do i = 1, n
        dom(i, j) = caf_initial(int((myP - 1)*n + i - 1, c_long_long), &
                                int((myQ - 1)*n + j - 1, c_long_long))
      end do
    end do
  end subroutine stencil_reset

  !> This image's block after the last run.
  function stencil_field() result(field)
    real(real64), pointer :: field(:, :)
    field => dom
  end function stencil_field

  !> Halo bytes an image receives per iteration: 8 (4 n r + 4 r^2).
  integer(int64) function stencil_halo_bytes()
    stencil_halo_bytes = 8_int64*(4_int64*n*r + 4_int64*r*r)
  end function stencil_halo_bytes

  !> Coindexed assignments (data calls) per image and iteration.
  integer(int64) function stencil_calls_per_iteration(variant)
    integer, intent(in) :: variant
    if (variant == variant_get0 .or. variant == variant_get1) then
      stencil_calls_per_iteration = 2_int64*n + 6_int64*r
    else
      stencil_calls_per_iteration = 8
    end if
  end function stencil_calls_per_iteration

  !> Synchronisation statements per image and iteration.
  integer(int64) function stencil_syncs_per_iteration(variant)
    integer, intent(in) :: variant
    if (variant == variant_trivial) then
      stencil_syncs_per_iteration = 2
    else
      stencil_syncs_per_iteration = 2*(merge(2, 0, p > 1) + merge(2, 0, q > 1))
    end if
  end function stencil_syncs_per_iteration

  !> Collective: `iterations` iterations of `variant` from the current dom;
  !> this image's total and filter times in seconds.
  subroutine stencil_run(variant, iterations, total_s, filter_s)
    integer, intent(in) :: variant
    integer(int64), intent(in) :: iterations
    real(real64), intent(out) :: total_s, filter_s
    integer(int64) :: it, t0, t1, rate
    logical :: inner_first

    filter_ticks = 0
    inner_first = variant /= variant_get1 .or. mod(myP + myQ, 2) == 0
    call system_clock(t0, rate)
    do it = 1, iterations
      select case (variant)
      case (variant_trivial)
        call iterate_trivial()
      case (variant_put)
        call iterate_put()
      case (variant_get)
        call iterate_get()
      case default
        call iterate_get_fine(inner_first)
      end select
    end do
    call system_clock(t1)
    total_s = real(t1 - t0, real64)/real(rate, real64)
    filter_s = real(filter_ticks, real64)/real(rate, real64)
  end subroutine stencil_run

  ! ---- the variants ----------------------------------------------------------

  !> trivial: every image copies its borders into its 8 neighbours' halos.
  !> Per iteration: 8 puts, 2 sync all.
  subroutine iterate_trivial()
    sync all  ! every image has filtered: its halo may be overwritten (see the header)
    V(1:n, 1:n) = dom(1:n, 1:n)  ! computational region
    call put_borders()
    sync all  ! every halo has arrived
    call halo_complete()
    call filter(1, n, 1, n)
  end subroutine iterate_trivial

  !> put: reciprocal puts, the exclusive region filtered while they travel,
  !> the border strips after the pair-wise handshakes. Per iteration: 8
  !> puts, 2 handshakes.
  subroutine iterate_put()
    V(1:n, 1:n) = dom(1:n, 1:n)  ! internal region
    call put_borders()
    ! No global synchronisation here: the filter over the exclusive region only.
    call filter(1 + r, n - r, 1 + r, n - r)
    ! Pair-wise handshake synchronisation, a border strip after each sync.
    call handshake(1, .true.)
    call handshake(2, .true.)
    ! The neighbours have read their halos: they may be written again.
    call handshake(1, .false.)
    call handshake(2, .false.)
  end subroutine iterate_put

  !> get: publish the block, then fetch the 8 halo blocks in bulk. Per
  !> iteration: 8 gets, 2 handshakes.
  subroutine iterate_get()
    V(1:n, 1:n) = dom(1:n, 1:n)
    call handshake(1, .false.)  ! every neighbour's block is in its V
    call handshake(2, .false.)
    V(1 - r:0, 1:n) = V(n - r + 1:n, 1:n)[WW, myQ]                   ! from West
    V(n + 1:n + r, 1:n) = V(1:r, 1:n)[EE, myQ]                       ! from East
    V(1:n, 1 - r:0) = V(1:n, n - r + 1:n)[myP, SS]                   ! from South
    V(1:n, n + 1:n + r) = V(1:n, 1:r)[myP, NN]                       ! from North
    V(1 - r:0, 1 - r:0) = V(n - r + 1:n, n - r + 1:n)[WW, SS]        ! from South-West
    V(n + 1:n + r, 1 - r:0) = V(1:r, n - r + 1:n)[EE, SS]            ! from South-East
    V(1 - r:0, n + 1:n + r) = V(n - r + 1:n, 1:r)[WW, NN]            ! from North-West
    V(n + 1:n + r, n + 1:n + r) = V(1:r, 1:r)[EE, NN]                ! from North-East
    call handshake(1, .false.)  ! nobody reads a neighbour's V any more
    call handshake(2, .false.)
    call halo_complete()
    call filter(1, n, 1, n)
  end subroutine iterate_get

  !> get0 (inner_first) and the other half of get1: fine-grain gets, one
  !> coindexed assignment per halo row. Per iteration: 2n + 6r gets, 2
  !> handshakes.
  subroutine iterate_get_fine(inner_first)
    logical, intent(in) :: inner_first
    V(1:n, 1:n) = dom(1:n, 1:n)
    call handshake(1, .false.)
    call handshake(2, .false.)
    if (inner_first) call filter(1 + r, n - r, 1 + r, n - r)
    call get_rows()
    call handshake(1, .false.)
    call handshake(2, .false.)
    call halo_complete()
    call filter_border()
    if (.not. inner_first) call filter(1 + r, n - r, 1 + r, n - r)
  end subroutine iterate_get_fine

  ! ---- communication -----------------------------------------------------------

  !> The slides' 8 coindexed assignments: this image's borders into the
  !> neighbours' halos.
  subroutine put_borders()
    V(1 - r:0, 1:n)[EE, myQ] = dom(n - r + 1:n, 1:n)                 ! to East
    V(n + 1:n + r, 1:n)[WW, myQ] = dom(1:r, 1:n)                     ! to West
    V(1:n, 1 - r:0)[myP, NN] = dom(1:n, n - r + 1:n)                 ! to North
    V(1:n, n + 1:n + r)[myP, SS] = dom(1:n, 1:r)                     ! to South
    V(1 - r:0, 1 - r:0)[EE, NN] = dom(n - r + 1:n, n - r + 1:n)      ! to North-East
    V(n + 1:n + r, 1 - r:0)[WW, NN] = dom(1:r, n - r + 1:n)          ! to North-West
    V(1 - r:0, n + 1:n + r)[EE, SS] = dom(n - r + 1:n, 1:r)          ! to South-East
    V(n + 1:n + r, n + 1:n + r)[WW, SS] = dom(1:r, 1:r)              ! to South-West
  end subroutine put_borders

  !> Fine grain: the halo fetched one contiguous row (fixed y) at a time,
  !> 2n + 6r coindexed assignments.
  subroutine get_rows()
    integer :: j
    do j = 1, n
      V(1 - r:0, j) = V(n - r + 1:n, j)[WW, myQ]                     ! from West
      V(n + 1:n + r, j) = V(1:r, j)[EE, myQ]                         ! from East
    end do
    do j = 1 - r, 0
      V(1:n, j) = V(1:n, j + n)[myP, SS]                             ! from South
      V(1 - r:0, j) = V(n - r + 1:n, j + n)[WW, SS]                  ! from South-West
      V(n + 1:n + r, j) = V(1:r, j + n)[EE, SS]                      ! from South-East
    end do
    do j = n + 1, n + r
      V(1:n, j) = V(1:n, j - n)[myP, NN]                             ! from North
      V(1 - r:0, j) = V(n - r + 1:n, j - n)[WW, NN]                  ! from North-West
      V(n + 1:n + r, j) = V(1:r, j - n)[EE, NN]                      ! from North-East
    end do
  end subroutine get_rows

  !> The pair-wise handshake along `axis` (1: x, with W and E; 2: y, with S
  !> and N), as the slides wrote it for x. With `strips`, the border strip on
  !> a side is filtered right after the sync with that side's neighbour (or,
  !> when the block is narrower than 2r and a strip reaches both halos, after
  !> both syncs); along y this is where the halo corners are complete.
  subroutine handshake(axis, strips)
    integer, intent(in) :: axis
    logical, intent(in) :: strips
    integer :: mode, mine, lower, upper

    if (axis == 1) then
      mine = myP
      lower = stencil_image_of(WW, myQ)
      upper = stencil_image_of(EE, myQ)
    else
      mine = myQ
      lower = stencil_image_of(myP, SS)
      upper = stencil_image_of(myP, NN)
    end if
    do mode = 0, 1
      if (mod(mine, 2) == mode) then
        if (lower /= me) sync images(lower)  ! West (South)
        if (strips .and. interleave) call filter_strip(axis, -1)
      else
        if (upper /= me) sync images(upper)  ! East (North)
        if (strips .and. interleave) call filter_strip(axis, +1)
      end if
    end do
    if (strips .and. .not. interleave) then
      call filter_strip(axis, -1)
      call filter_strip(axis, +1)
    end if
  end subroutine handshake

  !> The test hook, once this image's halo is complete and before it is read.
  subroutine halo_complete()
    if (corrupt .and. me == num_images()) V(n + 1, n + 1) = V(n + 1, n + 1) + 1
  end subroutine halo_complete

  ! ---- the filter ----------------------------------------------------------------

  !> dom = filter(V) over x0..x1, y0..y1 (1-based, inclusive), summed in
  !> kernels::Filter2d's order; the time goes to filter_ticks.
  subroutine filter(x0, x1, y0, y1)
    integer, intent(in) :: x0, x1, y0, y1
    integer :: j, k, l
    integer(int64) :: t0, t1

    if (x0 > x1 .or. y0 > y1) return
    call system_clock(t0)
    do j = y0, y1
      dom(x0:x1, j) = 0
      do l = -r, r
        do k = -r, r
          ! dom(i, j) += w(k, l) V(i + k, j + l)
          dom(x0:x1, j) = dom(x0:x1, j) + w(k, l)*V(x0 + k:x1 + k, j + l)
        end do
      end do
    end do
    call system_clock(t1)
    filter_ticks = filter_ticks + (t1 - t0)
  end subroutine filter

  !> The strip of the border on one side (-1: west or south, +1: east or
  !> north) of `axis`. The x strips leave out the rows the y strips cover.
  subroutine filter_strip(axis, side)
    integer, intent(in) :: axis, side
    if (axis == 1) then
      if (side < 0) then
        call filter(1, r, 1 + r, n - r)          ! west columns
      else
        call filter(n - r + 1, n, 1 + r, n - r)  ! east columns
      end if
    else
      if (side < 0) then
        call filter(1, n, 1, r)                  ! south rows
      else
        call halo_complete()                     ! the north-east corner is in
        call filter(1, n, n - r + 1, n)          ! north rows
      end if
    end if
  end subroutine filter_strip

  !> Everything but the inner region (all of it when there is none).
  subroutine filter_border()
    if (n > 2*r) then
      call filter(1, n, 1, r)                    ! south rows
      call filter(1, n, n - r + 1, n)            ! north rows
      call filter(1, r, 1 + r, n - r)            ! west columns
      call filter(n - r + 1, n, 1 + r, n - r)    ! east columns
    else
      call filter(1, n, 1, n)
    end if
  end subroutine filter_border

end module stencil2d_caf_variants
